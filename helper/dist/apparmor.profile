# AppArmor profile for layover, installed by `make install` or the .deb as
# @FILE@. Ubuntu 23.10+ (kernel.apparmor_restrict_unprivileged_userns=1)
# lets only programs with a profile granting `userns` create an unprivileged
# user namespace. This one grants it to @BIN@ alone, in the form of
# bubblewrap's bwrap-userns-restrict: layover itself may create the user
# namespace and use capabilities inside it (to mount the overlay), and every
# program it runs is stacked with a child profile that denies all
# capabilities, so the sandboxed command cannot use layover to get around
# the restriction. See docs/design.md, "Install layout".

abi <abi/4.0>,

include <tunables/global>

profile @NAME@ @BIN@ flags=(attach_disconnected,mediate_deleted) {
  allow capability,
  allow file rwlkm /{**,},
  allow network,
  allow unix,
  allow ptrace,
  allow signal,
  allow mqueue,
  allow io_uring,
  allow userns,
  allow mount,
  allow umount,
  allow pivot_root,
  allow dbus,
  # layover runs with no_new_privs, so what it executes is stacked (&).
  allow pix /** -> &@NAME@//&@NAME@_child,

  include if exists <local/@NAME@>
}

profile @NAME@_child flags=(attach_disconnected,mediate_deleted) {
  allow file rwlkm /{**,},
  allow network,
  allow unix,
  allow ptrace,
  allow signal,
  allow mqueue,
  allow io_uring,
  allow userns,
  allow mount,
  allow umount,
  allow pivot_root,
  allow dbus,
  allow pix /** -> &@NAME@_child,
  audit deny capability,

  include if exists <local/@NAME@_child>
}
