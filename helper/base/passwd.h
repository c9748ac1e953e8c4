// An account's home from /etc/passwd, read as a file, not through NSS:
// getpwuid's modules cost ~0.5 ms of CPU at every start (attack17 measured
// it), and `layover` is a static PIE, where glibc loads them at run time
// and a module beyond `files` (systemd's, for a uid the file does not know)
// crashed the process (docs/performance.md, "Start-up, ninth pass"). An
// account NSS alone knows (LDAP) has no home here.
#pragma once

#include <string>
#include <string_view>

namespace base {

// The home of `uid` in passwd(5) text: its sixth field, when absolute; ""
// when no line names the uid. Pure.
std::string passwd_home(std::string_view passwd, unsigned uid);

// passwd_home() of /etc/passwd; "" when it cannot be read.
std::string passwd_file_home(unsigned uid);

}  // namespace base
