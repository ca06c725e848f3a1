/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Subcommands of the sidescope multi-call binary; one file each. */
#ifndef SIDESCOPE_COMMANDS_H
#define SIDESCOPE_COMMANDS_H

int cmd_ps(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_ctf(int argc, char **argv);
int cmd_dotnet_methods(int argc, char **argv);
int cmd_flame(int argc, char **argv);
int cmd_uprobe(int argc, char **argv);
int cmd_cron(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_stacks(int argc, char **argv);
/* for the wrapper scripts (scripts/lib/common.sh); not in the help */
int cmd_plumbing(int argc, char **argv);

#endif
