/* Placeholder until the owner of `sgla verify` lands it. */
#include <stdio.h>
#include "cli.h"
int sgla_cmd_verify(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "sgla verify: not implemented yet\n");
    return 2;
}
