// attention-lab: with no arguments opens the desktop app; otherwise runs a subcommand (cli.md).
#include "cli/cli.h"

int main(int argc, char** argv) { return attn::cli::run(argc, argv); }
