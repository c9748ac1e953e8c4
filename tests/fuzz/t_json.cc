#include <string>

#include "capture/patch/manifest.h"
#include "helper/sandbox/ipc/control_msg.h"
#include "helper/store/records/rejections.h"
#include "helper/store/layers/steps.h"
#include "tests/fuzz/targets.h"

namespace fuzz {

int json(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    auto m = capture::manifest_from_text(text);
    if (m.ok()) {
        // What it read writes back and reads again the same.
        auto again = capture::manifest_from_text(capture::manifest_to_text(m.value()));
        if (!again.ok() || again->changes.size() != m->changes.size() || again->base.size() != m->base.size() ||
            again->target != m->target)
            __builtin_trap();
    }
    (void)capture::sums_from_text(text);
    // Step records (helper/store/layers/steps.h): what reads back writes the same.
    auto r = steps::record_from_text(text);
    if (r.ok()) {
        auto again = steps::record_from_text(steps::record_to_text(r.value()));
        if (!again.ok() || again->paths != r->paths || again->label != r->label || again->n != r->n)
            __builtin_trap();
    }
    (void)steps::live_from_text(text);
    // The control channel's messages (helper/sandbox/ipc/control_msg.h): the same.
    auto q = control::decode_request(text);
    if (q.ok()) {
        auto again = control::decode_request(control::encode_request(q.value()));
        if (!again.ok() || again->op != q->op || again->label != q->label || again->step != q->step ||
            again->name != q->name)
            __builtin_trap();
    }
    auto a = control::decode_reply(text);
    if (a.ok()) {
        auto again = control::decode_reply(control::encode_reply(a.value()));
        if (!again.ok() || again->ok != a->ok || again->step != a->step || again->error != a->error ||
            (a->ok && again->count != a->count))
            __builtin_trap();
    }
    // Rejections (helper/store/records/rejections.h): the same round trip.
    auto rj = session::rejections_from_text(text);
    if (rj.ok()) {
        auto again = session::rejections_from_text(session::rejections_to_text(rj.value()));
        if (!again.ok() || again->list != rj->list || again->next_seq != rj->next_seq) __builtin_trap();
    }
    return 0;
}

}  // namespace fuzz
