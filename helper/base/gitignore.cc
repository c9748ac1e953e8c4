#include "helper/base/gitignore.h"

#include "helper/base/glob.h"

namespace base {

void IgnoreRules::add_line(std::string_view line) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // Trailing spaces go, unless the last one is escaped.
    while (!line.empty() && line.back() == ' ' && !(line.size() >= 2 && line[line.size() - 2] == '\\'))
        line.remove_suffix(1);
    if (line.empty() || line[0] == '#') return;
    Rule r;
    if (line[0] == '!') {
        r.negate = true;
        line.remove_prefix(1);
    }
    if (!line.empty() && line.back() == '/' && !(line.size() >= 2 && line[line.size() - 2] == '\\')) {
        r.dir_only = true;
        while (!line.empty() && line.back() == '/') line.remove_suffix(1);
    }
    if (line.empty()) return;
    // A separator at the start or in the middle anchors it.
    r.anchored = line.find('/') != std::string_view::npos;
    if (line[0] == '/') line.remove_prefix(1);
    if (line.empty()) return;
    r.pattern = std::string(line);
    r.inside_only = r.pattern.size() > 3 && r.pattern.compare(r.pattern.size() - 3, 3, "/**") == 0;
    rules_.push_back(std::move(r));
    shape(&rules_.back());
}

void IgnoreRules::shape(Rule* r) {
    if (r->anchored) return;
    std::string_view p = r->pattern;
    auto plain = [](std::string_view s) { return s.find_first_of("*?[\\") == std::string_view::npos; };
    if (plain(p)) {
        r->shape = Rule::Shape::Exact;
        r->len = p.size();
    } else if (p.size() > 1 && p.front() == '*' && plain(p.substr(1))) {
        r->shape = Rule::Shape::StarThen;
        r->from = 1;
        r->len = p.size() - 1;
    } else if (p.size() > 1 && p.back() == '*' && plain(p.substr(0, p.size() - 1))) {
        r->shape = Rule::Shape::ThenStar;
        r->len = p.size() - 1;
    }
}

void IgnoreRules::add_text(std::string_view text) {
    while (!text.empty()) {
        size_t nl = text.find('\n');
        add_line(text.substr(0, nl));
        if (nl == std::string_view::npos) break;
        text.remove_prefix(nl + 1);
    }
}

bool IgnoreRules::matches(const Rule& r, std::string_view path, std::string_view name, bool is_dir) const {
    if (r.dir_only && !is_dir) return false;
    // A name holds no '/', which is all a '*' would not match.
    std::string_view literal = std::string_view(r.pattern).substr(r.from, r.len);
    switch (r.shape) {
        case Rule::Shape::Exact: return name == literal;
        case Rule::Shape::StarThen: return name.ends_with(literal);
        case Rule::Shape::ThenStar: return name.starts_with(literal);
        case Rule::Shape::Glob: break;
    }
    if (!r.anchored) return glob_match(r.pattern, name);
    if (!glob_match(r.pattern, path)) return false;
    // "a/**" matches what is inside a, never a itself.
    return !r.inside_only || !glob_match(std::string_view(r.pattern).substr(0, r.pattern.size() - 3), path);
}

bool IgnoreRules::match(std::string_view path, bool is_dir) const {
    size_t slash = path.rfind('/');
    std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    for (size_t i = rules_.size(); i-- > 0;)
        if (matches(rules_[i], path, name, is_dir)) return !rules_[i].negate;
    return false;
}

bool IgnoreRules::ignored(std::string_view path, bool is_dir) const {
    for (size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/', slash + 1))
        if (match(path.substr(0, slash), true)) return true;
    return match(path, is_dir);
}

}  // namespace base
