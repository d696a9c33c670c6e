// Spelling checks of the command line before CLI11 parses it: a misspelled command or option is named
// with the closest valid one, where CLI11 would report a missing command or take the option's value
// for the scenario.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace wh {

/// The first misspelled word of `argv` (a command `app` has no subcommand of, or a long option the
/// command it names has not), as "unknown ... (fix: did you mean ...? see ...)"; "" if none. Values of
/// options are not looked at: only words starting with "--" after the command.
std::string misspelled_word(const CLI::App& app, int argc, char** argv);

/// The help that lists the options of the command `argv` names: "wormhole run --help", or
/// "wormhole --help" when it names none.
std::string help_for(const CLI::App& app, int argc, char** argv);

}  // namespace wh
