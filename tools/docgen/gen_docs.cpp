// Build-time generator of the man pages and shell completions, from the one
// definition of the command line (cli/app.cpp): what the pages and
// completions say is what the binary parses.
//
// Usage: ccdiag_docgen OUT_DIR
//   OUT_DIR/man/man1/ccdiag.1, ccdiag-<sub>[-<subsub>].1
//   OUT_DIR/completions/ccdiag.bash, _ccdiag (zsh), ccdiag.fish
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/app.hpp"

namespace fs = std::filesystem;
using ccdiag::CommandContext;

namespace {

std::vector<const CLI::App*> subcommands(const CLI::App* app) {
  return app->get_subcommands([](const CLI::App*) { return true; });
}

// Options a user types: named options, help and version included.
struct OptionDoc {
  std::vector<std::string> names;  // "-v", "--verbose"
  std::string value;               // "DIR" ... or empty for a flag
  std::string description;
  bool positional = false;
};

std::vector<OptionDoc> options_of(const CLI::App* app) {
  std::vector<OptionDoc> out;
  for (const CLI::Option* o : app->get_options()) {
    OptionDoc d;
    d.description = o->get_description();
    d.positional = o->get_positional() && !o->nonpositional();
    if (d.positional) {
      d.names.push_back(o->get_name(true, false));
    } else {
      for (const auto& s : o->get_snames()) d.names.push_back("-" + s);
      for (const auto& l : o->get_lnames()) d.names.push_back("--" + l);
    }
    if (o->get_items_expected_max() > 0 && !d.positional) d.value = o->get_type_name();
    out.push_back(std::move(d));
  }
  return out;
}

// troff escaping: backslashes and a leading '.' or '\'' would be requests.
std::string roff(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string roff_block(const std::string& text) {
  std::ostringstream o;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) o << (line.empty() ? std::string() : roff(line)) << "\n";
  return o.str();
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

void write_file(const fs::path& p, const std::string& content) {
  fs::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::trunc);
  f << content;
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

void man_page(const CLI::App* app, const std::vector<std::string>& path, const fs::path& dir, const std::string& date) {
  std::string name = "ccdiag";
  for (const auto& p : path) name += "-" + p;
  std::string command = "ccdiag";
  for (const auto& p : path) command += " " + p;
  std::ostringstream m;
  m << ".TH " << upper(name) << " 1 \"" << date << "\" \"ccdiag\" \"User Commands\"\n";
  m << ".SH NAME\n" << roff(name) << " \\- " << roff(path.empty() ? std::string(ccdiag::kAppDescription).substr(8)
                                                                 : app->get_description())
    << "\n";
  m << ".SH SYNOPSIS\n.B " << roff(command) << "\n";
  const auto opts = options_of(app);
  for (const auto& o : opts) {
    if (o.positional) m << "[\\fI" << roff(o.names[0]) << "\\fR...]\n";
  }
  m << "[\\fIOPTIONS\\fR]\n";
  const auto subs = subcommands(app);
  if (!subs.empty()) m << "\\fISUBCOMMAND\\fR\n";
  if (!app->get_description().empty()) m << ".SH DESCRIPTION\n" << roff(app->get_description()) << ".\n";
  m << ".SH OPTIONS\n";
  for (const auto& o : opts) {
    m << ".TP\n.B ";
    for (size_t i = 0; i < o.names.size(); ++i) m << (i ? ", " : "") << roff(o.names[i]);
    if (!o.value.empty()) m << " \\fI" << roff(o.value) << "\\fR";
    m << "\n" << roff(o.description) << "\n";
  }
  if (path.empty())
    m << ".PP\nGlobal options go before the subcommand: \\fBccdiag \\-\\-root DIR diagnose\\fR.\n";
  if (!subs.empty()) {
    m << ".SH SUBCOMMANDS\n";
    for (const auto* s : subs) {
      std::string page = name + "-" + s->get_name();
      m << ".TP\n.B " << roff(s->get_name()) << "\n" << roff(s->get_description()) << "; see \\fB" << roff(page)
        << "\\fR(1).\n";
    }
  }
  const std::string footer = app->get_footer();
  if (!footer.empty()) m << ".SH EXAMPLES\n.nf\n" << roff_block(footer) << ".fi\n";
  m << ".SH EXIT STATUS\n0 nothing found, 1 problem found, 2 usage or input error, 3 partial (some probes could not\n"
       "run), 4 internal error.\n";
  m << ".SH SEE ALSO\n";
  if (path.empty()) {
    for (size_t i = 0; i < subs.size(); ++i)
      m << (i ? ",\n" : "") << ".BR " << roff(name + "-" + subs[i]->get_name()) << " (1)";
    m << "\n";
  } else {
    m << ".BR ccdiag (1)\n";
  }
  m << ".PP\nDocumentation: /usr/share/doc/ccdiag/\n";
  write_file(dir / (name + ".1"), m.str());
  for (const auto* s : subs) {
    auto sub_path = path;
    sub_path.push_back(s->get_name());
    man_page(s, sub_path, dir, date);
  }
}

// Every command path ("", "probe", "probe pcie"), with its subcommand names
// and option words, for the completion scripts.
struct Node {
  std::string path;
  std::vector<std::pair<std::string, std::string>> subs;     // name, description
  std::vector<OptionDoc> options;
};

void collect_nodes(const CLI::App* app, const std::string& path, std::vector<Node>& out) {
  Node n;
  n.path = path;
  for (const auto* s : subcommands(app)) n.subs.emplace_back(s->get_name(), s->get_description());
  n.options = options_of(app);
  out.push_back(n);
  for (const auto* s : subcommands(app)) collect_nodes(s, path.empty() ? s->get_name() : path + " " + s->get_name(), out);
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string bash_completion(const std::vector<Node>& nodes) {
  std::ostringstream b;
  b << "# bash completion for ccdiag; generated by tools/docgen from the CLI definition.\n"
       "_ccdiag() {\n"
       "  local cur prev path w i\n"
       "  cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
       "  prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
       "  # The command path: the subcommand words typed so far.\n"
       "  path=\"\"\n"
       "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
       "    w=\"${COMP_WORDS[i]}\"\n"
       "    case \"$w\" in -*) continue ;; esac\n"
       "    case \" $(_ccdiag_subs \"$path\") \" in *\" $w \"*) path=\"${path:+$path }$w\" ;; esac\n"
       "  done\n"
       "  # An option that takes a value: complete file names.\n"
       "  case \" $(_ccdiag_value_opts \"$path\") \" in *\" $prev \"*)\n"
       "    COMPREPLY=($(compgen -f -- \"$cur\")); return ;; esac\n"
       "  if [[ \"$cur\" == -* ]]; then\n"
       "    COMPREPLY=($(compgen -W \"$(_ccdiag_opts \"$path\")\" -- \"$cur\"))\n"
       "  else\n"
       "    COMPREPLY=($(compgen -W \"$(_ccdiag_subs \"$path\")\" -- \"$cur\"))\n"
       "    [ ${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- \"$cur\"))\n"
       "  fi\n"
       "}\n";
  auto emit = [&](const char* fn, auto words_of) {
    b << fn << "() {\n  case \"$1\" in\n";
    for (const auto& n : nodes) b << "    " << shell_quote(n.path) << ") echo " << shell_quote(words_of(n)) << " ;;\n";
    b << "  esac\n}\n";
  };
  emit("_ccdiag_subs", [](const Node& n) {
    std::string w;
    for (const auto& [s, d] : n.subs) w += (w.empty() ? "" : " ") + s;
    return w;
  });
  emit("_ccdiag_opts", [](const Node& n) {
    std::string w;
    for (const auto& o : n.options)
      if (!o.positional)
        for (const auto& name : o.names) w += (w.empty() ? "" : " ") + name;
    return w;
  });
  // Global options stay valid after a subcommand (the app falls through).
  const Node& top = nodes.front();
  emit("_ccdiag_value_opts", [&top](const Node& n) {
    std::string w;
    std::vector<OptionDoc> opts = n.options;
    if (&n != &top) opts.insert(opts.end(), top.options.begin(), top.options.end());
    for (const auto& o : opts)
      if (!o.positional && !o.value.empty())
        for (const auto& name : o.names) w += (w.empty() ? "" : " ") + name;
    return w;
  });
  b << "complete -o filenames -F _ccdiag ccdiag\n";
  return b.str();
}

std::string fish_escape(const std::string& s) { return shell_quote(s); }

std::string fish_completion(const std::vector<Node>& nodes) {
  std::ostringstream f;
  f << "# fish completion for ccdiag; generated by tools/docgen from the CLI definition.\n"
       "complete -c ccdiag -f\n"
       "# The subcommand path typed so far (words that name subcommands).\n"
       "function __ccdiag_path\n"
       "  set -l words (commandline -opc)\n"
       "  set -e words[1]\n"
       "  set -l path ''\n"
       "  for w in $words\n"
       "    if string match -q -- '-*' $w; continue; end\n"
       "    if contains -- $w (__ccdiag_subs $path)\n"
       "      if test -z \"$path\"; set path $w; else; set path \"$path $w\"; end\n"
       "    end\n"
       "  end\n"
       "  echo $path\n"
       "end\n"
       "function __ccdiag_subs\n"
       "  switch \"$argv\"\n";
  for (const auto& n : nodes) {
    f << "    case " << fish_escape(n.path) << "\n      printf '%s\\n'";
    for (const auto& [s, d] : n.subs) f << " " << fish_escape(s);
    f << "\n";
  }
  f << "  end\nend\n";
  for (const auto& n : nodes) {
    const std::string cond = "test (__ccdiag_path) = " + fish_escape(n.path);
    for (const auto& [s, d] : n.subs)
      f << "complete -c ccdiag -n " << fish_escape(cond) << " -a " << fish_escape(s) << " -d " << fish_escape(d) << "\n";
    for (const auto& o : n.options) {
      if (o.positional) continue;
      f << "complete -c ccdiag -n " << fish_escape(cond);
      for (const auto& name : o.names) {
        if (name.rfind("--", 0) == 0) f << " -l " << fish_escape(name.substr(2));
        else f << " -s " << fish_escape(name.substr(1));
      }
      if (!o.value.empty()) f << " -r -F";
      f << " -d " << fish_escape(o.description) << "\n";
    }
  }
  return f.str();
}

std::string zsh_completion(const std::vector<Node>& nodes) {
  std::ostringstream z;
  z << "#compdef ccdiag\n# zsh completion for ccdiag; generated by tools/docgen from the CLI definition.\n"
       "_ccdiag() {\n"
       "  local -a words_typed subs opts\n"
       "  local path='' w\n"
       "  for w in ${words[2,CURRENT-1]}; do\n"
       "    [[ $w == -* ]] && continue\n"
       "    subs=(${(f)\"$(_ccdiag_subs \"$path\")\"})\n"
       "    (( ${subs[(Ie)$w]} )) && path=\"${path:+$path }$w\"\n"
       "  done\n"
       "  if [[ $PREFIX == -* ]]; then\n"
       "    opts=(${(f)\"$(_ccdiag_opts \"$path\")\"})\n"
       "    _describe -t options 'ccdiag option' opts\n"
       "  else\n"
       "    subs=(${(f)\"$(_ccdiag_subdescs \"$path\")\"})\n"
       "    if (( ${#subs} )); then _describe -t commands 'ccdiag command' subs; else _files; fi\n"
       "  fi\n"
       "}\n";
  auto emit = [&](const char* fn, auto lines_of) {
    z << fn << "() {\n  case \"$1\" in\n";
    for (const auto& n : nodes) {
      z << "    " << shell_quote(n.path) << ") print -l --";
      for (const auto& l : lines_of(n)) z << " " << shell_quote(l);
      z << " ;;\n";
    }
    z << "  esac\n}\n";
  };
  emit("_ccdiag_subs", [](const Node& n) {
    std::vector<std::string> v;
    for (const auto& [s, d] : n.subs) v.push_back(s);
    return v;
  });
  auto colon_escape = [](std::string s) {
    std::string out;
    for (char c : s) out += c == ':' ? std::string("\\:") : std::string(1, c);
    return out;
  };
  emit("_ccdiag_subdescs", [&](const Node& n) {
    std::vector<std::string> v;
    for (const auto& [s, d] : n.subs) v.push_back(colon_escape(s) + ":" + d);
    return v;
  });
  emit("_ccdiag_opts", [&](const Node& n) {
    std::vector<std::string> v;
    for (const auto& o : n.options)
      if (!o.positional)
        for (const auto& name : o.names) v.push_back(colon_escape(name) + ":" + o.description);
    return v;
  });
  z << "_ccdiag \"$@\"\n";
  return z.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: ccdiag_docgen OUT_DIR\n";
    return 2;
  }
  try {
    const fs::path out(argv[1]);
    std::ostringstream sink_out, sink_err;
    CLI::App app{ccdiag::kAppDescription, "ccdiag"};
    CommandContext ctx{ccdiag::GlobalOptions{}, sink_out, sink_err};
    ccdiag::build_app(app, ctx);
    // SOURCE_DATE_EPOCH keeps the pages reproducible (Debian's convention).
    std::time_t t = std::time(nullptr);
    if (const char* e = std::getenv("SOURCE_DATE_EPOCH")) t = static_cast<std::time_t>(std::strtoll(e, nullptr, 10));
    std::string date;
    {
      std::tm tm{};
      ::gmtime_r(&t, &tm);
      char buf[16];
      std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
      date = buf;
    }
    man_page(&app, {}, out / "man" / "man1", date);
    std::vector<Node> nodes;
    collect_nodes(&app, "", nodes);
    write_file(out / "completions" / "ccdiag.bash", bash_completion(nodes));
    write_file(out / "completions" / "_ccdiag", zsh_completion(nodes));
    write_file(out / "completions" / "ccdiag.fish", fish_completion(nodes));
  } catch (const std::exception& e) {
    std::cerr << "ccdiag_docgen: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
