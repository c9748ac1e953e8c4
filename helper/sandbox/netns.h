// --network none: the sandbox gets its own network namespace with only a
// loopback interface, so no host daemon is reachable over TCP or abstract
// unix sockets.
#pragma once
#include "helper/base/result.h"

namespace netns {
base::Result<void> bring_up_loopback();
}
