"""``agent-memory erase``: erase a session (an agent, a user, events, a project) for real.

Without ``--yes`` nothing changes: the query service counts what the scope holds now. With it,
the erasure is accepted and the command waits for the receipt to say ``verified`` or for
``--wait`` seconds. ``DESCRIPTION`` is what ``agent-memory erase --help`` prints (plain text:
a terminal shows no markup). See docs/lifecycle.md.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any

from agent_memory_cli.api import REFUSED, UNREACHABLE, token_from

if TYPE_CHECKING:
    import httpx

    from agent_memory_cli.settings import Settings

DESCRIPTION = """\
Erase a session (an agent, a user, events, a project) for real.

    agent-memory erase --project p --session s1            dry run: what would go
    agent-memory erase --project p --session s1 --yes      erase, wait for the verified receipt
    agent-memory erase --list [--project p]                the audit log
    agent-memory erase --status er_...                     one receipt

Without --yes nothing changes: the query service counts what the scope holds now (events,
sessions, segments, TOC versions, grips, episodes). With it, the erasure is accepted and this
command waits until the receipt says "verified" (every store searched, nothing found) or
--wait seconds have passed; the erasure goes on either way. See docs/lifecycle.md.
"""
REDACT_DESCRIPTION = (
    "The stored events since --since that hold a secret the current redactor finds are erased, "
    "with everything derived from them, through the erasure path (not rewritten in place: "
    "docs/lifecycle.md says why). Without --yes: a dry run."
)


def _scope(args: argparse.Namespace) -> dict[str, Any] | None:
    given = {
        "session_id": args.session,
        "agent_id": args.agent,
        "user_id": args.user,
        "event_ids": args.event or None,
        "project": True if args.whole_project else None,
        "redactable_since": getattr(args, "since", None),
    }
    chosen = {k: v for k, v in given.items() if v}
    return chosen if len(chosen) == 1 else None


def _client(settings: Settings, token: str | None) -> httpx.Client:
    import httpx

    headers = {"Authorization": f"Bearer {t}"} if (t := token_from(token)) else {}
    return httpx.Client(base_url=settings.query_url, headers=headers, timeout=60)


def _show(answer: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(answer, indent=2, default=str))
        return
    rows = answer if isinstance(answer, list) else [answer]
    for r in rows:
        if "counts" in r and "erasure_id" not in r:  # a dry run
            print(f"would erase in {r['project_id']} ({json.dumps(r['scope'])}):")
        else:
            state = "verified" if r.get("verified") else r.get("status")
            print(f"{r['erasure_id']}  {r['requested_at']}  by {r['requested_by']}  {state}")
            print(f"  scope {json.dumps(r['scope'])} in {r['project_id']}")
            if r.get("waiting_for"):
                print(f"  waiting for: {', '.join(r['waiting_for'])}")
        for store, n in sorted(r["counts"].items()):
            print(f"  {store:<28} {n}")


def _run(settings: Settings, args: argparse.Namespace) -> int:
    import httpx

    try:
        with _client(settings, args.token) as http:
            return _work(http, args)
    except httpx.TransportError as exc:
        print(f"query service unavailable at {settings.query_url}: {exc}")
        return UNREACHABLE


def _work(http: httpx.Client, args: argparse.Namespace) -> int:
    if args.list:
        params = {"project_id": args.project} if args.project else {}
        r = http.get("/v1/erasures", params=params)
        if r.status_code != 200:
            print(r.text)
            return REFUSED
        _show(r.json()["erasures"], args.json)
        return 0
    if args.status:
        r = http.get(f"/v1/erasures/{args.status}")
        if r.status_code != 200:
            print(r.text)
            return REFUSED
        _show(r.json(), args.json)
        return 0
    scope = _scope(args)
    if not args.project or scope is None:
        print(
            "give --project and exactly one of --session, --agent, --user, --event, --all,"
            " --redactable-since"
        )
        return REFUSED
    body = {"project_id": args.project, "scope": scope}
    if not args.yes:
        r = http.post("/v1/erasures/dry-run", json=body)
        if r.status_code != 200:
            print(r.text)
            return REFUSED
        _show(r.json(), args.json)
        print("nothing was changed; run again with --yes to erase")
        return 0
    r = http.post("/v1/erasures", json=body)
    if r.status_code != 202:
        print(r.text)
        return REFUSED
    erasure_id = r.json()["erasure_id"]
    print(f"accepted {erasure_id} ({r.json()['events']} events); waiting for the receipt")
    deadline = time.monotonic() + args.wait
    receipt: dict[str, Any] = {}
    while time.monotonic() < deadline:
        receipt = http.get(f"/v1/erasures/{erasure_id}").json()
        if receipt.get("verified"):
            break
        time.sleep(0.5)
    if receipt:
        _show(receipt, args.json)
    if not receipt.get("verified"):
        print(f"not verified yet; follow it with: agent-memory erase --status {erasure_id}")
        return REFUSED
    return 0


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "erase",
        help="erase a session, agent, user, events or project everywhere (dry run first)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--project", help="the project (every scope is within one)")
    parser.add_argument("--session", help="erase this session")
    parser.add_argument("--agent", help="erase everything this agent recorded")
    parser.add_argument("--user", help="erase everything of this user")
    parser.add_argument("--event", action="append", help="erase this event (repeatable)")
    parser.add_argument("--all", dest="whole_project", action="store_true", help="the project")
    parser.add_argument(
        "--redactable-since",
        dest="since",
        metavar="TIME",
        help="the events since TIME holding a secret the current redactor finds",
    )
    parser.add_argument("--yes", action="store_true", help="erase (without it: a dry run)")
    parser.add_argument("--wait", type=float, default=120.0, help="seconds to wait for verified")
    parser.add_argument("--list", action="store_true", help="the audit log of erasures")
    parser.add_argument("--status", metavar="ERASURE_ID", help="one erasure's receipt")
    parser.add_argument("--json", action="store_true", help="the raw JSON of the API")
    parser.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")
    parser.set_defaults(run=_run)


def register_admin(admin_sub: Any) -> None:
    """``agent-memory admin redact --since T --project P [--yes]`` (issue 16): the stored events
    since T that hold a secret the current redactor finds are erased, with everything derived
    from them, through the erasure path (not rewritten in place: docs/lifecycle.md says why)."""
    redact = admin_sub.add_parser(
        "redact",
        help="erase stored events holding a secret the current redactor finds (dry run first)",
        description=REDACT_DESCRIPTION,
    )
    redact.add_argument("--since", required=True, help="RFC 3339 time: events since then")
    redact.add_argument("--project", required=True, help="the project")
    redact.add_argument("--yes", action="store_true", help="erase (without it: a dry run)")
    redact.add_argument("--wait", type=float, default=120.0, help="seconds to wait for verified")
    redact.add_argument("--json", action="store_true", help="the raw JSON of the API")
    redact.add_argument("--token", help="bearer token (default: AGENT_MEMORY_TOKEN)")
    redact.set_defaults(
        run=_run,
        session=None,
        agent=None,
        user=None,
        event=None,
        whole_project=False,
        list=False,
        status=None,
    )
