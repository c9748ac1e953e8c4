#include "capture/patch/manifest_steps.h"

#include "helper/base/json/reader.h"

namespace capture {

base::Result<std::vector<steps::Record>> session_records(const std::string& d, const std::string& target,
                                                         const std::function<bool(const std::string&)>& keep) {
    TRY(int settled, steps::settle(d, target));  // the paths a freeze left pending
    (void)settled;
    TRY(std::vector<steps::Record> out, steps::read_all(d));
    if (out.empty()) return out;
    steps::Record live;
    live.n = static_cast<int>(out.back().n) + 1;
    live.live = true;
    TRY(live.paths, steps::touched_layer(d + "/upper", d, out.back().n, target));
    if (auto l = steps::read_live(d)) {
        live.label = l->label;
        live.start = l->start;
    }
    if (!live.paths.empty()) out.push_back(std::move(live));
    for (auto& r : out) std::erase_if(r.paths, [&](const steps::Touched& t) { return !keep(t.path); });
    return out;
}

void steps_to_manifest(std::string* out, const std::vector<steps::Record>& records) {
    if (records.empty()) return;
    *out += ",\n \"steps\": [";
    for (size_t i = 0; i < records.size(); i++) {
        *out += i ? ",\n " : "\n ";
        steps::record_json(out, records[i]);
    }
    *out += "]";
}

base::Result<std::vector<steps::Record>> steps_from_manifest(base::jsonread::Parser& p) {
    std::vector<steps::Record> out;
    if (!p.begin_array()) return base::error("steps is not an array");
    while (p.next_item()) {
        if (out.size() > static_cast<size_t>(steps::kMaxSteps))
            return base::error("steps lists more than " + std::to_string(steps::kMaxSteps + 1) + " records");
        auto r = steps::read_record(p);
        if (!r) return base::error("steps[" + std::to_string(out.size()) + "]: " + r.error().message);
        if (!out.empty() && out.back().live) return base::error("steps: a record follows the live one");
        if (!out.empty() && r->n <= out.back().n) return base::error("steps: the step numbers do not go up");
        out.push_back(std::move(r.value()));
    }
    if (!p.ok()) return base::error("steps is not valid JSON");
    return out;
}

}  // namespace capture
