#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "review/apply/handoff.h"

TEST_CASE("review handoff: every open and write arrives in order, across batches, with its bytes") {
    review::Handoff h;
    std::string got;
    std::thread consumer([&] {
        review::HandoffBatch b;
        while (h.take(b))
            for (const auto& op : b.ops) {
                if (op.tag) got += "[" + std::to_string(reinterpret_cast<uintptr_t>(op.tag)) + "]";
                else got += std::to_string(op.off) + ":" + b.buf.substr(op.pos, op.len) + ";";
            }
    });
    std::string want;
    std::string big(3u << 20, 'x');  // larger than a batch
    for (uintptr_t i = 1; i <= 2000; i++) {
        h.open(reinterpret_cast<const void*>(i));
        want += "[" + std::to_string(i) + "]";
        std::string data = i == 1000 ? big : "d" + std::to_string(i);
        h.write(i * 10, data.data(), data.size());
        h.write(0, "", 0);  // nothing: dropped
        want += std::to_string(i * 10) + ":" + data + ";";
    }
    h.close();
    consumer.join();
    CHECK(got == want);
}

TEST_CASE("review handoff: stop wakes a producer blocked on a full queue and ends the consumer") {
    review::Handoff h;
    std::thread producer([&] {
        std::string chunk(review::Handoff::kBatchBytes, 'y');
        for (int i = 0; i < 64; i++) h.write(0, chunk.data(), chunk.size());  // blocks after kQueued batches
        h.close();
    });
    review::HandoffBatch b;
    REQUIRE(h.take(b));
    h.stop();
    producer.join();  // returns: nothing waits forever
    CHECK(h.stopped());
    CHECK_FALSE(h.take(b));
}
