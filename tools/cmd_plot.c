/* Placeholder until the owner of `sgla plot` lands it. */
#include <stdio.h>
#include "cli.h"
int sgla_cmd_plot(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "sgla plot: not implemented yet\n");
    return 2;
}
