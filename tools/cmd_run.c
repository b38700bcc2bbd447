/* Placeholder until the owner of `sgla run` lands it. */
#include <stdio.h>
#include "cli.h"
int sgla_cmd_run(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "sgla run: not implemented yet\n");
    return 2;
}
