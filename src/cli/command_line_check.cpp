// Spelling checks of the command line (command_line_check.h).
#include "command_line_check.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "wormhole/core/input_text.h"

namespace wh {
namespace {

/// The command path `argv` names (e.g. {run} or {memo, stats}), the deepest command found, and the
/// index of the first word after it; a word where a command should be that names none goes to `bad`.
struct Path {
  std::vector<const CLI::App*> commands;
  int next = 1;
  std::string bad;  // a word where a subcommand was expected
};

/// Every subcommand of `app` (CLI11's get_subcommands() without a filter gives the parsed ones only).
std::vector<const CLI::App*> subcommands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

Path command_path(const CLI::App& app, int argc, char** argv) {
  Path p;
  const CLI::App* at = &app;
  for (int i = 1; i < argc; ++i) {
    const std::string_view w = argv[i];
    if (w.empty() || w[0] == '-') return p;  // options (and --help, --version) end the search
    const std::vector<const CLI::App*> subs = subcommands_of(*at);
    if (subs.empty()) return p;  // a positional argument of the command
    const CLI::App* found = nullptr;
    for (const CLI::App* s : subs)
      if (s->get_name() == w) found = s;
    if (!found) {
      p.bad = w;
      return p;
    }
    at = found;
    p.commands.push_back(found);
    p.next = i + 1;
  }
  return p;
}

std::string name_of(const Path& p) {
  std::string s = "wormhole";
  for (const CLI::App* c : p.commands) s += " " + c->get_name();
  return s;
}

}  // namespace

std::string help_for(const CLI::App& app, int argc, char** argv) { return name_of(command_path(app, argc, argv)) + " --help"; }

std::string misspelled_word(const CLI::App& app, int argc, char** argv) {
  const Path p = command_path(app, argc, argv);
  const CLI::App& at = p.commands.empty() ? app : *p.commands.back();
  if (!p.bad.empty()) {
    std::vector<std::string> names;
    for (const CLI::App* s : subcommands_of(at)) names.push_back(s->get_name());
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return "unknown command \"" + p.bad + "\" of " + name_of(p) + " (fix: did you mean " + closest(p.bad, names) +
           "? the commands are " + list + "; see " + name_of(p) + " --help)";
  }
  if (p.commands.empty()) return "";
  std::vector<std::string> longs;
  for (const CLI::Option* o : at.get_options())
    for (const std::string& n : o->get_lnames()) longs.push_back("--" + n);
  longs.push_back("--help");
  for (int i = p.next; i < argc; ++i) {
    const std::string_view w = argv[i];
    if (w == "--") return "";  // what follows is not options
    if (w.size() < 3 || w.substr(0, 2) != "--") continue;
    const std::string name(w.substr(0, w.find('=')));
    if (std::find(longs.begin(), longs.end(), name) != longs.end()) continue;
    // Far from every option it is more likely a setting (--wormhole for WORMHOLE) than a typo.
    std::string best = closest(name, longs);
    bool near = edit_distance(name, best) <= 3;
    // A shortened option (--output for --output-dir) means the one option it begins.
    const auto begins = [&](const std::string& o) { return o.size() > name.size() && o.compare(0, name.size(), name) == 0; };
    if (!near && std::count_if(longs.begin(), longs.end(), begins) == 1)
      best = *std::find_if(longs.begin(), longs.end(), begins), near = true;
    return "unknown option " + name + " of " + name_of(p) + " (fix: " +
           (near ? "did you mean " + best + "? " : std::string()) + "see " + name_of(p) + " --help" +
           (!near && at.get_option_no_throw("--set") ? "; settings are given as --set KEY=VALUE, e.g. --set WORMHOLE=1)"
                                                    : ")");
  }
  return "";
}

}  // namespace wh
