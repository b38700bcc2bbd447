/* Placeholder until the owner of `sgla tables` lands it. */
#include <stdio.h>
#include "cli.h"
int sgla_cmd_tables(int argc, char **argv)
{
    (void)argc; (void)argv;
    fprintf(stderr, "sgla tables: not implemented yet\n");
    return 2;
}
