#include "helper/cli/common/config_args.h"

#include <algorithm>

#include "helper/sandbox/policy/run_args.h"

namespace cli {

namespace {

using base::toml::Value;

size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); j++) row[j] = j;
    for (size_t i = 1; i <= a.size(); i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); j++) {
            size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

bool similar(const std::string& key, const std::string& name) {
    return edit_distance(key, name) <= 2 || (key.size() >= 3 && name.find(key) != std::string::npos) ||
           (name.size() >= 3 && key.find(name) != std::string::npos);
}

// "network (run), json (status, show)": the options like key, with the verbs taking them.
std::string suggestions(const std::string& key) {
    std::vector<std::pair<std::string, std::string>> found;  // name, verbs
    for (const auto& f : all_flags()) {
        if (f.cfg == Cfg::No || !similar(key, f.name)) continue;
        auto it = std::find_if(found.begin(), found.end(), [&](const auto& p) { return p.first == f.name; });
        if (it == found.end()) found.push_back({f.name, f.verb});
        else it->second += std::string(", ") + f.verb;
    }
    std::string out;
    for (size_t i = 0; i < found.size() && i < 4; i++)
        out += (i ? ", " : "") + ("'" + found[i].first + "' (") + found[i].second + ")";
    return out;
}

std::string verbs_taking(const std::string& name) {
    std::string out;
    for (const auto& f : all_flags())
        if (name == f.name && f.cfg != Cfg::No) out += (out.empty() ? "" : ", ") + std::string(f.verb);
    return out;
}

std::string type_error(const Flag& f, const Value& v) {
    std::string n = f.name;
    switch (f.arg) {
        case Arg::None:
            if (v.type != Value::Type::Bool)
                return "'" + n + "' is a switch; write " + n + " = true or " + n + " = false";
            return "";
        case Arg::Optional:
            if (v.type == Value::Type::String) return "";
            return "'" + n + "' takes a string, e.g. " + n + " = \"never\"";
        case Arg::Value:
            if (v.type == Value::Type::Bool)
                return "'" + n + "' takes a value, not true/false; write it in quotes, e.g. " + n + " = \"...\"";
            if (v.type == Value::Type::Array && !f.repeat)
                return "'" + n + "' takes one value, not an array; write " + n + " = \"...\"";
            return "";
    }
    return "";
}

std::string value_text(const Value& v) { return v.type == Value::Type::Integer ? std::to_string(v.integer) : v.str; }

// run's values go through run's own parser, for its own error message.
std::string verb_value_error(const Flag& f, const Value& v) {
    if (std::string(f.verb) != "run" || f.arg == Arg::None) return "";
    std::vector<std::string> items = v.type == Value::Type::Array ? v.items : std::vector<std::string>{value_text(v)};
    for (const auto& item : items) {
        // "~" is expanded later; it never decides validity.
        auto r = parse_run_args({"--" + std::string(f.name) + "=" + item});
        if (!r) return r.error().message;
    }
    return "";
}

bool check_entry(const base::toml::Entry& e, ConfigError* err) {
    auto bad = [&](const std::string& msg) {
        *err = {e.line, msg};
        return false;
    };
    bool top = e.table.empty(), exists = false, settable = false;
    std::vector<const Flag*> reach;
    for (const auto& f : all_flags()) {
        if (e.key != f.name) continue;
        exists = true;
        settable |= f.cfg != Cfg::No;
        if (top ? f.cfg == Cfg::Any : (e.table == f.verb && f.cfg != Cfg::No)) reach.push_back(&f);
    }
    if (!reach.empty()) {
        for (const Flag* f : reach) {
            if (std::string why = type_error(*f, e.value); !why.empty()) return bad(why);
            if (std::string why = verb_value_error(*f, e.value); !why.empty()) return bad(why);
        }
        return true;
    }
    if (exists && (!settable || (!top && find_flag(e.table, e.key))))
        return bad("'" + e.key + "' cannot be set in the config file: it names one invocation's object; give --" +
                   e.key + " on the command line");
    if (exists) {
        std::string verbs = verbs_taking(e.key);
        std::string first = verbs.substr(0, verbs.find(','));
        return bad(
            (top ? "top-level key '" + e.key + "' reaches no verb" : "[" + e.table + "] has no '" + e.key + "'") +
            "; " + verbs + (verbs.find(',') == std::string::npos ? " takes" : " take") + " it: put it under [" + first +
            "]");
    }
    std::string near = suggestions(e.key);
    return bad(
        "unknown key '" + e.key + "'" + (top ? "" : " in [" + e.table + "]") + "; " +
        (near.empty() ? "keys are long option names ('layover config' lists them)" : "did you mean " + near + "?"));
}

}  // namespace

bool check_config(const base::toml::Doc& doc, ConfigError* err) {
    auto verbs = table_verbs();
    for (const auto& t : doc.tables)
        if (std::find(verbs.begin(), verbs.end(), t.name) == verbs.end() || t.name == "config") {
            std::string list;
            for (const auto& v : verbs)
                if (v != "config") list += (list.empty() ? "" : ", ") + v;
            *err = {t.line, "unknown table [" + t.name + "]; tables are named after verbs: " + list};
            return false;
        }
    for (const auto& e : doc.entries)
        if (!check_entry(e, err)) return false;
    return true;
}

std::vector<Setting> settings_for(const base::toml::Doc& doc, const std::string& verb) {
    std::vector<Setting> out;
    for (const auto& e : doc.entries) {
        if (!e.table.empty() && e.table != verb) continue;
        const Flag* f = find_flag(verb, e.key);
        if (!f || f->cfg == Cfg::No || (e.table.empty() && f->cfg != Cfg::Any)) continue;
        if (e.table.empty()) {
            bool overridden = std::any_of(doc.entries.begin(), doc.entries.end(),
                                          [&](const auto& o) { return o.table == verb && o.key == e.key; });
            if (overridden) continue;
        }
        out.push_back({f, e.value, e.line});
    }
    return out;
}

std::vector<std::string> setting_args(const Setting& s, const std::string& home) {
    std::string flag = "--" + std::string(s.flag->name);
    const Value& v = s.value;
    if (v.type == Value::Type::Bool) {
        if (v.boolean) return {flag};
        std::string name = s.flag->name;
        if (find_flag(s.flag->verb, "no-" + name)) return {"--no-" + name};
        if (name.rfind("no-", 0) == 0 && find_flag(s.flag->verb, name.substr(3))) return {"--" + name.substr(3)};
        return {};
    }
    auto expand = [&](std::string x) {
        if (!home.empty() && (x == "~" || x.rfind("~/", 0) == 0)) x = home + x.substr(1);
        return flag + "=" + x;
    };
    if (v.type == Value::Type::Array) {
        std::vector<std::string> out;
        for (const auto& item : v.items) out.push_back(expand(item));
        return out;
    }
    return {expand(value_text(v))};
}

CliScan scan_cli(const std::string& verb, const std::vector<std::string>& args) {
    CliScan out;
    bool options = true;
    for (size_t i = 0; i < args.size(); i++) {
        const std::string& a = args[i];
        if (!options) {
            out.args.push_back(a);
            continue;
        }
        if (a == "--no-config") {
            out.no_config = true;
            continue;
        }
        out.args.push_back(a);
        if (a == "--") {
            options = false;
            continue;
        }
        if (a.size() < 2 || a[0] != '-') {
            if (options_end_at_operand(verb)) options = false;
            continue;
        }
        const Flag* f = nullptr;
        std::string value;
        bool inline_value = false;
        if (a[1] == '-') {
            auto eq = a.find('=');
            f = find_flag(verb, a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2));
            if (eq != std::string::npos) value = a.substr(eq + 1), inline_value = true;
        } else {
            for (const auto& g : all_flags())
                if (verb == g.verb && g.short_name == a[1]) f = &g;
            if (f && a.size() > 2) value = a.substr(2), inline_value = true;
        }
        if (!f) continue;
        if (f->arg == Arg::Value && !inline_value && i + 1 < args.size()) {
            value = args[++i];
            out.args.push_back(value);
        }
        out.given.push_back(f);
        out.values.push_back(value);
    }
    return out;
}

std::vector<Effective> effective(const base::toml::Doc& doc, const std::string& verb, const CliScan& cli,
                                 const std::string& file_label) {
    std::vector<Effective> out;
    auto file = settings_for(doc, verb);
    for (const auto& f : all_flags()) {
        if (verb != f.verb || f.cfg == Cfg::No) continue;
        Effective e{&f, "", ""};
        Value v;
        auto s = std::find_if(file.begin(), file.end(), [&](const Setting& x) { return x.flag == &f; });
        if (s != file.end()) {
            v = s->value;
            e.origin = file_label + ":" + std::to_string(s->line);
        }
        bool from_cli = false;
        for (size_t i = 0; i < cli.given.size(); i++) {
            if (cli.given[i] != &f) continue;
            if (!from_cli && !(f.repeat && s != file.end())) v = Value{};
            from_cli = true;
            if (f.arg == Arg::None) {
                v.type = Value::Type::Bool;
                v.boolean = true;
            } else if (f.repeat) {
                if (v.type != Value::Type::Array) v = Value{Value::Type::Array, "", 0, false, {}};
                v.items.push_back(cli.values[i]);
            } else {
                v.type = Value::Type::String;
                v.str = cli.values[i];
            }
        }
        if (from_cli) e.origin = e.origin.empty() || !f.repeat ? "command line" : e.origin + " + command line";
        if (!e.origin.empty()) {
            e.shown = base::toml::to_toml(v);
        } else if (*f.def) {
            std::string def = f.def;
            bool literal = def.find(' ') == std::string::npos && def[0] != '$';
            e.shown = f.arg == Arg::None ? def
                      : literal          ? base::toml::to_toml({Value::Type::String, def, 0, false, {}})
                                         : def;
            e.origin = "default";
        } else {
            continue;
        }
        out.push_back(std::move(e));
    }
    return out;
}

}  // namespace cli
