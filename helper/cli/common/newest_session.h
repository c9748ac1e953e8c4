// The hint a verb that needs a SESSION gives when none was named (apply and
// save do not default to the most recent one, as status and diff do: they
// write): the one it likely meant.
#pragma once
#include <string>

namespace cli {

// "missing SESSION..." then " (the most recent is 'NAME': 'layover VERB NAME
// MORE')", or "" when the state dir holds no session.
std::string newest_session_hint(const char* verb, const char* more = "");

}  // namespace cli
