/* sgla: the command-line front end.  `sgla <command> --help` for each. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
            "sgla %s — scalar-gated causal linear attention\n"
            "\n"
            "usage: sgla <command> [options]\n"
            "\n"
            "commands:\n"
            "  verify   run the verification levels (fp64 cross-check, alpha = 1, fp16 failure point;\n"
            "           with a GPU also the CUDA kernel against fp64 and its latency)\n"
            "  tables   print the numeric tables (overflow, underflow, cumprod, memory length)\n"
            "  run      compute one forward from .npy files and write o (and ht) as .npy\n"
            "  grad     the gradients of one forward (given do, and dht) as .npy\n"
            "  plot     write the SVG figures (decay matrix, error against alpha, bounds)\n"
            "  bench    time a backend on built-in or given shapes\n"
            "  version  print the library version\n"
            "\n"
            "`sgla <command> --help` describes each command's options.\n",
            sgla_version());
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *c = argv[1];
    if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(c, "version") || !strcmp(c, "--version")) {
        if (argc > 2) {
            fprintf(stderr, "sgla version: takes no options (got '%s')\n", argv[2]);
            return 2;
        }
        printf("sgla %s\n", sgla_version());
        return 0;
    }
    if (!strcmp(c, "verify")) return sgla_cmd_verify(argc - 1, argv + 1);
    if (!strcmp(c, "tables")) return sgla_cmd_tables(argc - 1, argv + 1);
    if (!strcmp(c, "run")) return sgla_cmd_run(argc - 1, argv + 1);
    if (!strcmp(c, "grad")) return sgla_cmd_grad(argc - 1, argv + 1);
    if (!strcmp(c, "plot")) return sgla_cmd_plot(argc - 1, argv + 1);
    if (!strcmp(c, "bench")) return sgla_cmd_bench(argc - 1, argv + 1);
    fprintf(stderr, "sgla: unknown command '%s' (try `sgla --help`)\n", c);
    return 2;
}
