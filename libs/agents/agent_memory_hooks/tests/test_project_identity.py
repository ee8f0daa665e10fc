"""One project per repository (issue 52, point 4): the rule of ``agent_memory_hooks.project``.

A repository is one project, whichever of its worktrees an agent works in: a linked worktree
(made by the real ``git worktree add``) names its main checkout; where the folder does not
exist on this machine (a transcript imported from another one) the path's worktree
conventions, the remote or the branch recorded by the session name it. The client library
(recall) decides every case alike.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agent_memory_client.project import resolve_project_id as client_rule
from agent_memory_hooks.project import resolve_project_id

GONE = "/nonexistent-am-ident/home/dev"  # folders of another machine


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=30,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A real repository ``shop-api`` with one commit and three linked worktrees, in the places
    people put them: ``.worktrees/``, Claude Code's ``.claude/worktrees/``, and a sibling."""
    if shutil.which("git") is None:
        pytest.fail("git is needed for the worktree tests (it is installed with the toolchain)")
    main = tmp_path / "shop-api"
    main.mkdir()
    git("init", "-q", "-b", "main", cwd=main)
    (main / "README").write_text("x\n")
    git("add", "README", cwd=main)
    git("commit", "-q", "-m", "first", cwd=main)
    for branch, where in (
        ("wt-a", main / ".worktrees" / "feature-a"),
        ("wt-b", main / ".claude" / "worktrees" / "fix-b"),
        ("wt-c", tmp_path / "shop-api-wt-c"),
    ):
        git("worktree", "add", "-q", "-b", branch, str(where), cwd=main)
    (main / ".worktrees" / "feature-a" / "src").mkdir()
    return main


def test_every_worktree_of_a_repository_is_one_project(repo: Path) -> None:
    folders = [
        repo,
        repo / ".worktrees" / "feature-a",
        repo / ".worktrees" / "feature-a" / "src",
        repo / ".claude" / "worktrees" / "fix-b",
        repo.parent / "shop-api-wt-c",  # a sibling: only its .git file says whose it is
    ]
    for folder in folders:
        assert resolve_project_id(str(folder), {}) == "shop-api", folder
        assert client_rule(folder, {}) == "shop-api", folder


def test_a_bare_clone_s_worktrees_name_the_clone(tmp_path: Path) -> None:
    source = tmp_path / "src-repo"
    source.mkdir()
    git("init", "-q", "-b", "main", cwd=source)
    (source / "f").write_text("x\n")
    git("add", "f", cwd=source)
    git("commit", "-q", "-m", "first", cwd=source)
    git("clone", "-q", "--bare", str(source), str(tmp_path / "billing.git"), cwd=tmp_path)
    tree = tmp_path / "trees" / "hotfix"
    git("worktree", "add", "-q", "-b", "hotfix", str(tree), cwd=tmp_path / "billing.git")
    assert resolve_project_id(str(tree), {}) == "billing" == client_rule(tree, {})


@pytest.mark.parametrize(
    ("cwd", "remote", "branch", "project"),
    [
        (f"{GONE}/shopfront", None, "main", "shopfront"),
        (f"{GONE}/shopfront/.worktrees/feature-x", None, "feature-x", "shopfront"),
        (f"{GONE}/shopfront/.worktrees/feature-x/src/api", None, None, "shopfront"),
        (f"{GONE}/shopfront/.claude/worktrees/fix-login", None, "fix-login", "shopfront"),
        (f"{GONE}/shopfront-worktrees/perf", None, None, "shopfront"),
        (f"{GONE}/shopfront.worktrees/perf", None, None, "shopfront"),
        (f"{GONE}/.cursor/worktrees/shopfront/k3x", None, None, "shopfront"),
        (f"{GONE}/conductor/workspaces/shopfront/lisbon", None, None, "shopfront"),
        (f"{GONE}/shopfront-feature-cart", None, "feature/cart", "shopfront"),  # ../repo-branch
        (f"{GONE}/shopfront-main", None, "main", "shopfront-main"),  # a trunk is no suffix
        (f"{GONE}/checkout-7", "git@github.com:acme/shopfront.git", "main", "shopfront"),
        (f"{GONE}/checkout-7", "https://github.com/acme/shopfront/", None, "shopfront"),
    ],
)
def test_a_folder_of_another_machine_is_named_from_its_path_and_metadata(
    cwd: str, remote: str | None, branch: str | None, project: str
) -> None:
    assert resolve_project_id(cwd, {}, remote, branch) == project
    assert client_rule(cwd, {}, remote, branch) == project


def test_the_explicit_project_wins_and_a_loose_folder_keeps_its_hash(tmp_path: Path) -> None:
    env = {"AGENT_MEMORY_PROJECT_ID": "billing"}
    assert resolve_project_id(f"{GONE}/shopfront/.worktrees/x", env) == "billing"
    loose = tmp_path / "scratch"
    loose.mkdir()
    found = resolve_project_id(str(loose), {})
    assert found.startswith("dir-") and found == client_rule(loose, {})
    # a folder named like a convention but inside a real repository is that repository's
    inside = tmp_path / "mono" / "tools-worktrees" / "x"
    inside.mkdir(parents=True)
    (tmp_path / "mono" / ".git").mkdir()
    assert resolve_project_id(str(inside), {}) == "mono" == client_rule(inside, {})
