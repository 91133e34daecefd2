"""A fuzz campaign's HTML page, for a person: the summary first, then one section per divergence signature with
its smallest case (the instructions), the differing items with golden and device columns, the Dest heatmap and
the command that reproduces it; what was not compared folded away once."""
from __future__ import annotations

from .case import Case, dump_case
from .compare import Verdict
from .report_html import cards, dest_from_diffs, esc, folded, heatmap_figure, page, pre, table

ROWS_SHOWN = 16      # differing items listed per signature (the JSON report has them all)
CASE_LINES = 60      # lines of the smallest case shown


def _summary(report: dict) -> str:
    s = report.get("summary", {})
    n, matched, diverged, known = (s.get(k, 0) for k in ("cases", "matched", "diverged", "known"))
    other = s.get("errors", 0)
    partial = " (interrupted: partial)" if report.get("interrupted") else ""
    return (cards([("cases" + partial, n, ""), ("matched", matched, "ok"), ("diverged", diverged, "bad" if diverged else "ok"),
                   ("known", known, ""), ("not compared", other, "")])
            + pre([f"{report.get('backend')} against {report.get('against')}; profile {report.get('profile')},"
                   f" seed {report.get('seed')}, {report.get('elapsed_s', 0)} s"]))


def _repro(report: dict, case: Case) -> str:
    """The commands that regenerate ``case`` and shrink it (its index is in the report's divergences)."""
    index = next((d["index"] for d in report.get("divergences", []) if d.get("name") == case.name), None)
    if index is None:
        return f"tensix-diff minimize {case.name}.yaml --backend {report.get('backend')}"
    regen = (f"tensix-diff fuzz --seed {report.get('seed')} --start {index} --count 1 --profile {report.get('profile')}"
             f" --no-run --write-cases repro")
    return f"{regen}\ntensix-diff minimize repro/{case.name}.yaml --backend {report.get('backend')}"


def _differences(verdict: Verdict) -> str:
    """The differing items as a table with one column per side, named as the comparison names them."""
    c = verdict.comparison
    if c is None:
        return pre([verdict.message])
    rows = [(f"{d.region} {d.location}", _hex(d.expected), _hex(d.actual)) for d in c.diffs[:ROWS_SHOWN]]
    more = f"{len(c.diffs) - ROWS_SHOWN} more differing items in the JSON report" if len(c.diffs) > ROWS_SHOWN else ""
    return (pre([c.summary()]) + table(("item", *c.names), rows) + (pre([more]) if more else ""))


def _hex(v) -> str:
    return f"{v:#x}" if isinstance(v, int) and not isinstance(v, bool) else str(v)


def _signature_section(report: dict, group: dict, pair: tuple[Case, Verdict] | None) -> tuple[str, str]:
    head = f"{group['signature']}  ({group['count']} case{'s' if group['count'] != 1 else ''})"
    if pair is None:
        return head, pre([f"smallest: {group['smallest']} ({group['smallest_instructions']} instructions)"])
    case, verdict = pair
    text = dump_case(case).splitlines()
    shown = text[:CASE_LINES] + ([f"... {len(text) - CASE_LINES} more lines"] if len(text) > CASE_LINES else [])
    pics = dest_from_diffs(verdict.comparison.diffs) if verdict.comparison is not None else None
    body = (pre([f"smallest case: {case.name} ({case.instruction_count} instructions)"]) + pre(shown)
            + _differences(verdict) + (heatmap_figure(case.name, *pics) if pics else "")
            + "<p>Reproduce:</p>" + pre(_repro(report, case).splitlines()))
    others = group.get("cases", [])
    if len(others) > 1:
        body += folded(f"all {len(others)} cases with this signature", pre([", ".join(others)]))
    return head, body


def campaign_html(report: dict, smallest: dict[str, tuple[Case, Verdict]] | None = None) -> str:
    """The page for a campaign ``report`` (fuzz's JSON) and, per signature text, its smallest divergent case
    (triage.CampaignTriage.smallest)."""
    smallest = smallest or {}
    tri = report.get("triage") or {}
    sections = [_signature_section(report, g, smallest.get(g["signature"])) for g in tri.get("groups", [])]
    if not sections:
        sections.append(("No divergence", pre(["every compared case matched or was explained by the registry"])))
    notes = [f"{tri['known']} case(s) fully explained by the known-divergence registry"] if tri.get("known") else []
    notes += [f"known divergence no longer reproduces: {k['id']} (case {k['case']})" for k in tri.get("stale_known", [])]
    if notes:
        sections.append(("Known divergences", pre(notes)))
    errors = report.get("errors") or []
    uncompared = report.get("uncompared") or {}
    if errors or uncompared:
        why = table(("why not compared", "cases"), sorted(uncompared.items(), key=lambda kv: -kv[1]))
        listed = table(("case", "verdict", "message"), [(e["name"], e["outcome"], e["message"][:160]) for e in errors])
        sections.append(("Not compared", folded(f"{sum(uncompared.values()) or len(errors)} cases not compared",
                                                why + listed)))
    return page(f"tensix-diff fuzz campaign: {report.get('profile')} seed {report.get('seed')}", sections,
                lead=_summary(report))
