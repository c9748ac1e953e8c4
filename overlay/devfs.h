// A minimal /dev, as bubblewrap builds it: null zero full random urandom tty
// bound from the host, a new devpts instance with ptmx, a private /dev/shm,
// and the usual symlinks. Nothing else of the host's /dev (its /dev/pts, GPU,
// kvm, audio, video) is reachable.
#pragma once
#include "overlay/mounts.h"

namespace overlay {

extern const char* const kDevNodes[];  // null, zero, full, random, urandom, tty; nullptr-terminated

base::Result<void> build_dev(const MountPlan& plan, Handles& h);

}  // namespace overlay
