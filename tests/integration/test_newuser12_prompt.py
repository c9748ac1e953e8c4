"""What newuser12's walk found: the exit prompt's summary left out what
`status` shows beside a change, so a new symlink's target and a mode change
that carries no risk mark (`chmod 600`) were not on screen when a person
chose to apply."""
from test_newcomer_marks import prompt_summary


def test_the_exit_prompt_shows_a_links_target_and_a_mode_change_as_status_does(lo, require_sandbox):
    (lo.target / "key.txt").write_text("k\n")
    (lo.target / "key.txt").chmod(0o644)
    r = lo.run("chmod 600 key.txt; ln -s key.txt keylink", session="n12")
    assert r.returncode == 0, r.stderr
    r = lo("status", "n12")
    assert r.returncode == 0, r.stderr
    listed = r.stdout.decode().splitlines()[:-1]
    assert sorted(listed) == ["A  keylink  (-> key.txt)", "m  key.txt  (mode 644 -> 600)"], listed
    summary = prompt_summary(lo, "n12", {})
    for line in listed:
        assert "\n  %s\n" % line in summary, (line, summary)
    # The real tree is untouched: still mode 0644, no link.
    assert (lo.target / "key.txt").stat().st_mode & 0o777 == 0o644
    assert not (lo.target / "keylink").is_symlink()
