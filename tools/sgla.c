/* sgla: the command-line front end.  `sgla <command> --help` for each. */
#include <stdio.h>
#include <stdlib.h>
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
            "  version  print the library version (also --version, -V)\n"
            "\n"
            "`sgla <command> --help` describes each command's options; `--name=value` and\n"
            "`--name value` are the same, and `--` ends the options.  Exit status: 0 success,\n"
            "1 a runtime failure, 2 a usage error (verify: 3 when its levels could not run).\n",
            sgla_version());
}

static int version(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: sgla version   (also sgla --version, sgla -V)\n\nPrints the library version.\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "sgla version: takes no options (got '%s')\n", argv[1]);
        return 2;
    }
    printf("sgla %s\n", sgla_version());
    return 0;
}

/* The options after the command in the long-option conventions: `--name=value`
 * becomes `--name value`, and `--` ends the options (no command takes operands,
 * so anything after it is refused).  Returns a new argv (free with its split
 * names) or NULL with *rc set. */
static char **normalise(int argc, char **argv, int *nout, char ***owned, int *rc)
{
    char **out = calloc((size_t)(2 * argc + 1), sizeof *out);
    char **own = calloc((size_t)(argc + 1), sizeof *own);
    if (!out || !own) {
        free(out), free(own);
        fprintf(stderr, "sgla: out of memory\n");
        *rc = 1;
        return NULL;
    }
    int n = 0, no = 0;
    out[n++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *eq;
        if (!strcmp(a, "--")) {
            if (i + 1 < argc) {
                fprintf(stderr, "sgla %s: takes no operands (got '%s' after --)\n", argv[0], argv[i + 1]);
                for (int k = 0; k < no; k++) free(own[k]);
                free(out), free(own);
                *rc = 2;
                return NULL;
            }
            break;
        }
        if (a[0] == '-' && a[1] == '-' && (eq = strchr(a, '=')) != NULL) {
            const size_t len = (size_t)(eq - a);
            char *name = malloc(len + 1);
            if (!name) {
                for (int k = 0; k < no; k++) free(own[k]);
                free(out), free(own);
                fprintf(stderr, "sgla: out of memory\n");
                *rc = 1;
                return NULL;
            }
            memcpy(name, a, len);
            name[len] = 0;
            own[no++] = name;
            out[n++] = name;
            out[n++] = (char *)eq + 1;
        } else {
            out[n++] = argv[i];
        }
    }
    *nout = n;
    *owned = own;
    return out;
}

#if defined(__SANITIZE_ADDRESS__)
/* Under AddressSanitizer an allocation past its limit returns NULL, as in a release build, so the
 * tool's out-of-memory paths run (and are tested) instead of the sanitizer's abort. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

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
    int (*cmd)(int, char **) = NULL;
    if (!strcmp(c, "version") || !strcmp(c, "--version") || !strcmp(c, "-V")) cmd = version;
    else if (!strcmp(c, "verify")) cmd = sgla_cmd_verify;
    else if (!strcmp(c, "tables")) cmd = sgla_cmd_tables;
    else if (!strcmp(c, "run")) cmd = sgla_cmd_run;
    else if (!strcmp(c, "grad")) cmd = sgla_cmd_grad;
    else if (!strcmp(c, "plot")) cmd = sgla_cmd_plot;
    else if (!strcmp(c, "bench")) cmd = sgla_cmd_bench;
    if (!cmd) {
        fprintf(stderr, "sgla: unknown command '%s' (try `sgla --help`)\n", c);
        return 2;
    }
    int n = 0, rc = 0;
    char **owned = NULL;
    char **args = normalise(argc - 1, argv + 1, &n, &owned, &rc);
    if (!args) return rc;
    rc = cmd(n, args);
    for (int k = 0; owned[k]; k++) free(owned[k]);
    free(owned);
    free(args);
    return rc;
}
