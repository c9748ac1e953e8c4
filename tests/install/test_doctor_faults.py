"""`layover doctor` reading a fake root (LAYOVER_TEST_DOCTOR_ROOT): the
sysctl and file probes are wired to the right checks and fixes. Every
fault's diagnosis is unit-tested in tests/unit/test_doctor.cc."""
import os
import subprocess

from conftest import BUILD


def doctor(root, tmp_path):
    state = tmp_path / "state"
    state.mkdir(mode=0o700, exist_ok=True)
    env = dict(os.environ, LAYOVER_TEST_DOCTOR_ROOT=str(root), LAYOVER_STATE_DIR=str(state), HOME=str(tmp_path))
    r = subprocess.run([str(BUILD / "layover"), "doctor", "--target", str(tmp_path)], capture_output=True,
                       env=env, timeout=60)
    return r.returncode, r.stdout.decode()


def fake_root(tmp_path, **sysctls):
    root = tmp_path / "root"
    for name, value in sysctls.items():
        p = root / "proc/sys" / name.replace(".", "/")
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(value + "\n")
    root.mkdir(exist_ok=True)
    return root


def test_debian_userns_sysctl_off(tmp_path):
    rc, out = doctor(fake_root(tmp_path, **{"kernel.unprivileged_userns_clone": "0"}), tmp_path)
    assert rc == 1
    assert "FAIL  unprivileged user namespaces enabled: disabled by kernel.unprivileged_userns_clone=0 " \
           "(Debian): sudo sysctl -w kernel.unprivileged_userns_clone=1" in out


def test_rhel_max_user_namespaces_zero(tmp_path):
    rc, out = doctor(fake_root(tmp_path, **{"user.max_user_namespaces": "0"}), tmp_path)
    assert rc == 1
    assert "sudo sysctl -w user.max_user_namespaces=15000" in out


def test_ubuntu_apparmor_restriction(tmp_path):
    root = fake_root(tmp_path, **{"kernel.apparmor_restrict_unprivileged_userns": "1"})
    rc, out = doctor(root, tmp_path)
    name = os.path.realpath(BUILD / "layover").lstrip("/").replace("/", ".")
    assert rc == 1
    assert "FAIL  AppArmor allows unprivileged user namespaces: install layover's profile" in out
    assert "sudo apparmor_parser -r /etc/apparmor.d/" + name in out
    (root / "etc/apparmor.d").mkdir(parents=True)
    (root / "etc/apparmor.d" / name).write_text("profile")
    rc, out = doctor(root, tmp_path)
    assert "the profile is installed but not loaded: sudo apparmor_parser -r /etc/apparmor.d/" + name in out
    attr = root / "proc/self/attr/apparmor"
    attr.mkdir(parents=True)
    (attr / "current").write_text(name + " (enforce)\n")
    rc, out = doctor(root, tmp_path)
    assert "OK    AppArmor restricts user namespaces; layover runs under its profile (%s (enforce))" % name in out


def test_old_kernel_and_container(tmp_path):
    root = fake_root(tmp_path, **{"kernel.osrelease": "5.10.0-28-amd64"})
    (root / ".dockerenv").write_text("")
    rc, out = doctor(root, tmp_path)
    assert rc == 1
    assert "FAIL  Linux 5.10.0-28-amd64 is 5.11 or newer: overlayfs in a user namespace needs Linux 5.11+" in out
    assert "INFO  running inside docker: user namespaces work here" in out


def test_the_real_system_passes(tmp_path):
    rc, out = doctor(fake_root(tmp_path), tmp_path)
    assert rc == 0, out
    assert "OK    Linux " not in out  # no osrelease in the fake root: no kernel line
    rc, out = doctor("/", tmp_path)
    assert rc == 0, out
    assert "OK    Linux %s is 5.11 or newer" % os.uname().release in out
