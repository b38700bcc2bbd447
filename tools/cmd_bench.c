/* Placeholder until the owner of `sgla bench` lands it. */
#include <stdio.h>
#include "cli.h"
int sgla_cmd_bench(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "sgla bench: not implemented yet\n");
    return 2;
}
