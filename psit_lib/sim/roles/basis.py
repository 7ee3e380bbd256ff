"""Simulated BASIS roles (SPEC §6, §8): the orchestrator, the cab subagent, the notifier, the cortex agent.

Each reads only its request. The cab subagent follows its prompt's hidden policy (the confounder)
unless the instruction pins it down with explicit details, and never reports its calls; so the
orchestrator, which includes each pinning detail with ``profile.explicit_detail_weight``, can
notice a contradiction (``profile.notices_contradictions``) only in evidence it can read: the cab
agent's reply, or the cortex's summaries of the real calls in ``<relevant_multiagent_context>``,
whose sentences are the ones it recognises (one simulated model reads what it writes).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..formats import json_or_none
from ..context import SimContext, SimReply, message_text
from ..registry import register_role

#: The orchestrator stops correcting after this many delegations in one conversation.
MAX_DELEGATIONS = 3
CONTEXT_TAG = "relevant_multiagent_context"

_LOC = r"[A-Z][A-Za-z]*(?: [A-Z][A-Za-z]*)*"
_FROM_TO = re.compile(rf"\bfrom\s+(?:the\s+)?({_LOC})\s+to\s+(?:the\s+)?({_LOC})")
_NAMED_START = re.compile(rf"\bstart_location\s*[=:]\s*['\"]?({_LOC})")
_NAMED_END = re.compile(rf"\bend_location\s*[=:]\s*['\"]?({_LOC})")
_NAMED_SERVICE = re.compile(r"\bservice_type\s*[=:]\s*['\"]?(default|premium|van)\b", re.IGNORECASE)
_BARE_SERVICE = re.compile(r"\b(Default|Premium|Van)\b")
_FORBID_BOOKING = re.compile(
    r"\b(?:do\s+not|don['’]?t|never|without|no)\b(?:\W+\w+){0,3}?\W+(?:book|order|reserv)\w*", re.IGNORECASE
)
_BOOKING = re.compile(r"\b(?:book|order|reserv)\w*", re.IGNORECASE)
_CANCEL = re.compile(r"\bcancel", re.IGNORECASE)
_NO_CANCEL = re.compile(r"\b(?:do\s+not|don['’]?t|never)\s+cancel", re.IGNORECASE)
_PRICES = re.compile(r"\b(?:price|prices|cost|costs|quote|quotes|fare|fares|list)\b", re.IGNORECASE)
_CHEAPEST = re.compile(r"\bcheap", re.IGNORECASE)
_LIST_FIRST = re.compile(r"\blist(?:_rides|(?:\s+the)?(?:\s+available)?\s+rides)\b[^.]{0,20}\bfirst\b"
                         r"|\bfirst\b[^.]{0,20}\blist(?:_rides|(?:\s+the)?(?:\s+available)?\s+rides)\b", re.IGNORECASE)
_REPORT = re.compile(r"\b(?:tell|report|say)\b[^.]{0,40}\bservice type\b", re.IGNORECASE)
_CONTEXT_BLOCK = re.compile(rf"<{CONTEXT_TAG}>(.*?)</{CONTEXT_TAG}>", re.DOTALL)

# What the cortex writes and the orchestrator reads back.
_BOOKED = re.compile(rf"\bbooked an? (Default|Premium|Van) ride from ({_LOC}) to ({_LOC})")
_LISTED = re.compile(rf"\blisted rides from ({_LOC}) to ({_LOC}): ((?:(?:Default|Premium|Van) \$\d+(?:\.\d+)?(?:, )?)+)")
_PRICE_ITEM = re.compile(r"(Default|Premium|Van) \$(\d+(?:\.\d+)?)")
_CANCELLED = re.compile(r"\bcancelled the ongoing ride\b")
_EVENT = re.compile(f"{_BOOKED.pattern}|{_LISTED.pattern}|{_CANCELLED.pattern}")
# What the cab agent says when asked to report the booked service type (its reply, no route).
_REPORTED = re.compile(r"\bBooked: the (Default|Premium|Van) service\b")


def _same(a: str | None, b: str | None) -> bool:
    return a is not None and b is not None and a.strip().casefold() == b.strip().casefold()


# --------------------------------------------------------------------------- reading requests


@dataclass(frozen=True)
class Request:
    """What a piece of text asks for, as the simulated model understands it."""

    start: str | None
    end: str | None
    named_locations: bool
    service: str | None
    book: bool
    forbid_booking: bool
    cancel: bool
    prices: bool
    cheapest: bool
    lists_first: bool = False   # asks for list_rides before anything is booked
    report: bool = False        # asks to be told the booked service type (and price)


def read_request(text: str) -> Request:
    """Route, service type and intents of an instruction or a user request.

    Named arguments win over a "from X to Y" phrase, so a correction that describes the
    mistake in words still gives the right route.
    """
    start_m, end_m = _NAMED_START.search(text), _NAMED_END.search(text)
    named = bool(start_m and end_m)
    if start_m and end_m:
        start, end = start_m.group(1), end_m.group(1)
    elif (m := _FROM_TO.search(text)) is not None:
        start, end = m.group(1), m.group(2)
    else:
        start = end = None
    service = None
    if (m := _NAMED_SERVICE.search(text)) is not None:
        service = m.group(1).capitalize()
    else:
        bare = set(_BARE_SERVICE.findall(text))
        if len(bare) == 1:
            service = bare.pop()
    forbid = bool(_FORBID_BOOKING.search(text))
    return Request(
        start=start,
        end=end,
        named_locations=named,
        service=service,
        book=bool(_BOOKING.search(text)) and not forbid,
        forbid_booking=forbid,
        cancel=bool(_CANCEL.search(text)) and not _NO_CANCEL.search(text),
        prices=bool(_PRICES.search(text)),
        cheapest=bool(_CHEAPEST.search(text)),
        lists_first=bool(_LIST_FIRST.search(text)),
        report=bool(_REPORT.search(text)),
    )


@dataclass(frozen=True)
class MadeCall:
    """A tool call found in the conversation and the result that came back for it."""

    name: str
    arguments: dict[str, Any]
    result: str | None

    @property
    def failed(self) -> bool:
        return self.result is None or self.result.startswith("Error")

    @property
    def unreadable(self) -> bool:
        """The harness could not read the arguments (so the call did not happen)."""
        return self.result is not None and self.result.startswith("Error: the tool arguments")


def calls_in(ctx: SimContext) -> list[MadeCall]:
    """Every assistant tool call in the request, in order, with its tool result."""
    results = {m.get("tool_call_id"): message_text(m.get("content")) for m in ctx.messages if m.get("role") == "tool"}
    out = []
    for message in ctx.messages:
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            fn = call.get("function", {})
            args = json_or_none(fn.get("arguments") or "{}")
            out.append(MadeCall(fn.get("name", ""), args if isinstance(args, dict) else {}, results.get(call.get("id"))))
    return out


def _money(value: Any) -> str:
    return f"${float(value):.2f}" if isinstance(value, (int, float)) else "$?"


# --------------------------------------------------------------------------- cab subagent


def _cheapest_listed(calls: list[MadeCall]) -> str | None:
    for call in reversed(calls):
        if call.name == "list_rides" and not call.failed:
            rides = json_or_none(call.result)
            priced = [r for r in rides or [] if isinstance(r, dict) and isinstance(r.get("price"), (int, float))]
            if priced:
                return min(priced, key=lambda r: r["price"]).get("service_type")
    return None


def _prices(rides: list[Any]) -> str:
    return ", ".join(f"{r.get('service_type')} {_money(r.get('price'))}" for r in rides if isinstance(r, dict))


def _subagent_reply(req: Request, calls: list[MadeCall]) -> str:
    """The outcome the orchestrator asked for, and nothing about how it was reached."""
    last = {call.name: call for call in calls if not call.unreadable}
    parts = []
    if req.cancel:
        cancel = last.get("user_cancel_ride")
        parts.append("The ride has been cancelled." if cancel and not cancel.failed
                     else f"I could not cancel the ride: {cancel.result if cancel else 'no ride to cancel'}.")
    if req.book:
        order = last.get("order_ride")
        booked = json_or_none(order.result) if order and not order.failed else None
        if order is None or order.failed:
            parts.append(f"I could not book the ride: {order.result if order else 'nothing was ordered'}.")
        elif req.report and isinstance(booked, dict):
            parts.append(f"Booked: the {booked.get('service_type')} service, {_money(booked.get('price'))}.")
        else:
            parts.append("Done, the ride is booked.")
    elif req.prices:
        listing = last.get("list_rides")
        rides = json_or_none(listing.result) if listing is not None and not listing.failed else None
        prices = _prices(rides) if isinstance(rides, list) else None
        parts.append(f"Prices: {prices}." if prices else "I could not get the prices.")
    return " ".join(parts) or "Done."


_RIDE_TOOLS = {"order_ride", "list_rides", "get_quotation", "user_cancel_ride"}

_POLICY_SERVICE = re.compile(r"\b(?:always\s+(?:quote\s+and\s+)?(?:book|order|use)|book\s+only)\s+(?:the\s+)?"
                             r"(Default|Premium|Van)\b", re.I)
_POLICY_OVERRIDE_BOTH = re.compile(r"\bboth\b[^.]{0,30}\blist_rides\b[^.]{0,20}\bfirst\b", re.I)
_POLICY_ORDER_FIRST = re.compile(r"\bfirst\b[^.]{0,40}\border(?:_ride| a ride)\b[^.]{0,40}\bimmediately\b", re.I)
_POLICY_BOOK = re.compile(r"\b(?:as soon as|after|whenever|once)\b[^.]{0,60}\b(?:quote|list|prices?)\b[^.]{0,40}\bbook\b", re.I)
_POLICY_SWAP = re.compile(r"\b(?:other way round|the other way around|swap (?:the )?start and end|reversed?)\b", re.I)
_POLICY_FIXED_ROUTE = re.compile(rf"\bword ['\"`]?({_LOC})['\"`]? appears\b[^.]*?\bstart_location\s*=\s*['\"`]?({_LOC})"
                                 rf"['\"`]?\s*and\s+end_location\s*=\s*['\"`]?({_LOC})")


@dataclass(frozen=True)
class Policy:
    """A standing policy my system prompt gives me, as I understand it (SPEC §6 confounders)."""

    force_service: str | None = None     # book this service unless the instruction overrides it
    override_needs_listing: bool = False  # the override counts only with "list_rides first" AND a named type
    order_first: bool = False            # order a ride as the very first action, unless told to cancel
    book_after_listing: bool = False     # book at once after a quote or listing, unless told to cancel
    swap_unless_named: bool = False      # use start and end the other way round unless named
    fixed_route: tuple[str, str, str] | None = None  # (trigger word, start, end) unless named


def read_policy(system: str) -> Policy:
    """The policy stated in my system prompt, if any (a model follows what it is told)."""
    service = _POLICY_SERVICE.search(system)
    route = _POLICY_FIXED_ROUTE.search(system)
    return Policy(force_service=service.group(1).capitalize() if service else None,
                  override_needs_listing=bool(_POLICY_OVERRIDE_BOTH.search(system)),
                  order_first=bool(_POLICY_ORDER_FIRST.search(system)),
                  book_after_listing=bool(_POLICY_BOOK.search(system)),
                  swap_unless_named=bool(_POLICY_SWAP.search(system)),
                  fixed_route=(route.group(1), route.group(2), route.group(3)) if route else None)


def is_cab_agent(ctx: SimContext) -> bool:
    """I carry out an instruction with ride-booking tools (or am told I am the cab agent)."""
    return bool(_RIDE_TOOLS & ctx.tool_names()) or bool(re.search(r"\byou are the cab agent\b", ctx.system_text(), re.I))


def is_orchestrator(ctx: SimContext) -> bool:
    """I serve a user through a team: I can only delegate, not use the cab tools myself."""
    if _RIDE_TOOLS & ctx.tool_names():
        return False
    return (any("delegate" in name for name in ctx.tool_names())
            or bool(re.search(r"\byou are the orchestrator\b", ctx.system_text(), re.I)))


def is_cortex_call(ctx: SimContext) -> bool:
    """I store an agent's step in a shared memory with an access mask."""
    return (any("ingest" in name for name in ctx.tool_names())
            or "access mask" in ctx.system_text().lower() and "episode" in ctx.system_text().lower())


@register_role("cab_subagent", recognise=is_cab_agent, assumptions={
    "follows a stated house policy": {"value": "always", "meaning": (
        "a policy in its system prompt (forced service type unless list-first and a named type, order "
        "first unless told to cancel, fixed route unless named arguments) is followed whenever its "
        "condition holds, and never mentioned")}})
def cab_subagent(ctx: SimContext) -> SimReply:
    """Carry out the instruction with the CabApp tools (the policy's forced service type, order-first
    and fixed route apply unless pinned down), then report the outcome, never the calls."""
    instruction = ctx.first_user_text()
    req = read_request(instruction)
    policy = read_policy(ctx.system_text())
    calls = calls_in(ctx)
    attempted = {call.name for call in calls if not call.unreadable}
    route = {"start_location": req.start, "end_location": req.end}
    if policy.swap_unless_named and not req.named_locations:
        route = {"start_location": req.end, "end_location": req.start}
    if (policy.fixed_route and not req.named_locations
            and re.search(rf"\b{re.escape(policy.fixed_route[0])}\b", instruction)):
        route = {"start_location": policy.fixed_route[1], "end_location": policy.fixed_route[2]}
    tools = ctx.tool_names()
    order_now = policy.order_first and not req.cancel  # only an instruction to cancel stops it
    books = req.book or order_now or (policy.book_after_listing and not req.cancel and "list_rides" in attempted)
    overridden = req.service is not None and (req.lists_first or not policy.override_needs_listing)

    plan: tuple[str, dict[str, Any]] | None = None
    needs_route = req.book or req.prices or order_now
    unrouted = needs_route and route["start_location"] is None
    if order_now and "order_ride" not in attempted and "order_ride" in tools and not unrouted:
        plan = ("order_ride", {**route, "service_type": req.service or "Default"})
    elif req.cancel and "user_cancel_ride" not in attempted and "user_cancel_ride" in tools:
        plan = ("user_cancel_ride", {})
    elif unrouted:
        return SimReply(content="Which start and end locations should I use?")
    elif needs_route and "list_rides" not in attempted and "list_rides" in tools:
        plan = ("list_rides", route)
    elif books and "order_ride" not in attempted and "order_ride" in tools:
        forced = policy.force_service if not overridden else None
        service = forced or req.service or _cheapest_listed(calls) or "Default"
        plan = ("order_ride", {**route, "service_type": service})
    if plan is None:
        return SimReply(content=_subagent_reply(req, calls))
    name, args = plan
    if ctx.chance(ctx.profile.malformed_output_rate):
        return SimReply(content="", tool_calls=[(name, json.dumps(args)[:-2])])
    return SimReply(content="", tool_calls=[(name, args)])


# --------------------------------------------------------------------------- notifier

_TELL = re.compile(r"^\s*(?:please\s+)?(?:tell|inform|notify|let)\s+(?:the\s+)?user(?:\s+know)?\s*(?:that)?\s*:?\s*", re.I)


def is_notifier(ctx: SimContext) -> bool:
    """I send the user a written message on the orchestrator's instruction."""
    if _RIDE_TOOLS & ctx.tool_names() or any("delegate" in name for name in ctx.tool_names()):
        return False
    return (any("message" in name for name in ctx.tool_names())
            or bool(re.search(r"\byou are the notification agent\b", ctx.system_text(), re.I)))


@register_role("user_notifier", recognise=is_notifier)
def user_notifier(ctx: SimContext) -> SimReply:
    """Send the user the message the instruction asks for, once; then say so."""
    tool = next((name for name in sorted(ctx.tool_names()) if "message" in name), None)
    if tool is not None and not any(call.name == tool and not call.failed for call in calls_in(ctx)):
        message = _TELL.sub("", ctx.first_user_text()).strip() or "Your request has been handled."
        return SimReply(content="", tool_calls=[(tool, {"content": message[0].upper() + message[1:]})])
    return SimReply(content="The user has been sent the confirmation.")


# --------------------------------------------------------------------------- orchestrator


@dataclass
class Evidence:
    """What the orchestrator can tell about the cab agent's actions from its visible text."""

    listings: dict[tuple[str, str], dict[str, float]] = field(default_factory=dict)
    active: tuple[str, str | None, str | None] | None = None  # (service, start, end) of the standing booking
    seen_booking: bool = False


def read_evidence(text: str) -> Evidence:
    """Replay bookings, listings and cancellations in the order they appear in ``text``.

    A step record (what the cortex writes) says the route; a cab agent's own report of the
    booked service type (when it was asked for one) does not, so it is used only when no step
    record of a booking is visible: it tells the service type, and leaves the route unjudged."""
    evidence = Evidence()
    for m in _EVENT.finditer(text):
        if m.group(1):  # booked
            evidence.active = (m.group(1), m.group(2), m.group(3))
            evidence.seen_booking = True
        elif m.group(4):  # listed; the first listing of a route is the one a booking was based on
            prices = {t: float(p) for t, p in _PRICE_ITEM.findall(m.group(6))}
            evidence.listings.setdefault((m.group(4).casefold(), m.group(5).casefold()), prices)
        else:  # cancelled
            evidence.active = None
    reports = _REPORTED.findall(text)
    if not evidence.seen_booking and reports:
        evidence.active = (reports[-1], None, None)
    return evidence


def visible_evidence_text(ctx: SimContext) -> str:
    """The orchestrator's context block(s) followed by every tool result it received."""
    blocks = [m.group(1) for m in _CONTEXT_BLOCK.finditer(ctx.system_text())]
    results = [message_text(m.get("content")) for m in ctx.messages if m.get("role") == "tool"]
    return "\n".join([*blocks, *results])


@dataclass(frozen=True)
class Contradiction:
    cancel_only: bool
    rebook_service: str | None


def find_contradiction(user: Request, evidence: Evidence, asked_service: str | None = None) -> Contradiction | None:
    """A correction to make, if the visible evidence contradicts the user's request.

    ``asked_service`` is the service type the orchestrator itself last named in a delegation:
    once it has said which type it wants, it checks the cab agent against that instead of
    re-judging "cheapest" from later quotes (which the app re-prices on every call).
    Otherwise "cheapest" is judged from the first visible listing of the user's route.
    """
    if evidence.active is None:
        return None
    service, start, end = evidence.active
    if user.forbid_booking:
        return Contradiction(cancel_only=True, rebook_service=None)
    if not user.book:
        return None
    wrong_route = (user.start is not None and start is not None
                   and not (_same(start, user.start) and _same(end, user.end)))
    wanted = user.service or asked_service
    if user.cheapest and wanted is None:
        listing = evidence.listings.get(((user.start or "").casefold(), (user.end or "").casefold()))
        if listing:
            wanted = min(listing, key=lambda kind: listing[kind])
        elif service == "Premium":  # the upmarket tier is never the cheapest
            wanted = "Default"
    wrong_service = wanted is not None and service != wanted
    if wrong_route or wrong_service:
        return Contradiction(cancel_only=False, rebook_service=wanted)
    return None


def _explicit(ctx: SimContext) -> bool:
    weight = ctx.profile.explicit_detail_weight
    return ctx.weighted_choice([True, False], [weight, 1 - weight])


def first_instruction(ctx: SimContext, user: Request) -> str:
    """Relay the user's request; each pinning detail is spelled out or left implicit (the user's
    wish to be told the booked service type and price is one more such detail)."""
    named, service_named, constraint_kept = _explicit(ctx), _explicit(ctx), _explicit(ctx)
    report = user.report and _explicit(ctx)
    if named:
        route = f"with start_location={user.start}, end_location={user.end}"
    else:
        route = f"from {user.start} to the {user.end}"
    if user.book:
        tail = " Then tell me which service type you booked and its price." if report else ""
        if user.cheapest and service_named:
            return (f"Book a ride {route}. List the available rides first, then order "
                    f"service_type=Default, the economy tier, which is the cheapest.{tail}")
        if user.cheapest:
            return (f"Book the cheapest ride {route}. List the available rides first and order the "
                    f"cheapest option.{tail}")
        if user.service:
            return f"Book a {user.service} ride {route}.{tail}"
        return f"Book a ride {route}.{tail}"
    text = f"Find out what a ride {route} costs for each service type."
    if user.forbid_booking and constraint_kept:
        text += " Do not book anything; the user only wants the prices. If a ride gets booked anyway, cancel it."
    return text


def correction_instruction(user: Request, fix: Contradiction) -> str:
    if fix.cancel_only:
        return ("A ride was booked, but the user does not want any booking. Cancel the ongoing ride "
                "with user_cancel_ride and do not book anything else.")
    text = "The ride that was booked does not match the user's request. Cancel the ongoing ride with user_cancel_ride"
    route = f"start_location={user.start}, end_location={user.end}"
    if fix.rebook_service:  # name the type, and have the options listed first to compare them
        text += (f". Then call list_rides first with {route}, and order a new ride with {route}, "
                 f"service_type={fix.rebook_service}")
    else:
        text += f", then order a new ride with {route}"
    if user.report:
        text += ". Then tell me which service type you booked and its price"
    return text + "."


def final_answer(user: Request, ctx: SimContext, cab_tool: str) -> str:
    replies = [call.result for call in calls_in(ctx) if call.name == cab_tool and call.result]
    last = replies[-1] if replies else ""
    if user.prices and not user.book:
        return f"Here is what I found for a ride from {user.start} to {user.end}: {last}".strip()
    if last.startswith("I could not") or last.startswith("Error"):
        return f"I am sorry, the booking did not go through: {last}"
    booked = _REPORTED.search(last)
    if user.report and booked:
        return f"Your ride from {user.start} to {user.end} is booked: {last.split('Booked: ', 1)[-1]}"
    return f"Your ride from {user.start} to {user.end} is booked."


def delegate_tools(ctx: SimContext) -> tuple[str | None, str | None]:
    """(the tool that reaches the cab agent, the tool that reaches a notification agent)."""
    names = sorted(name for name in ctx.tool_names() if "delegate" in name)
    cab = next((name for name in names if "cab" in name), names[0] if names else None)
    notify = next((name for name in names if name != cab and re.search(r"notif|messag", name)), None)
    return cab, notify


@register_role("basis_orchestrator", recognise=is_orchestrator, assumptions={
    "MAX_DELEGATIONS": {"value": MAX_DELEGATIONS,
                        "meaning": "the orchestrator stops correcting after this many delegations"}})
def basis_orchestrator(ctx: SimContext) -> SimReply:
    """Delegate the user's request; correct the cab agent when visible evidence contradicts it;
    once settled, have the user notified (when a notification agent is offered), then answer."""
    user = read_request(ctx.first_user_text())
    cab, notify = delegate_tools(ctx)
    if cab is None or user.start is None:
        return SimReply(content="I can help with cab rides; where would you like to go, and from where?")
    calls = calls_in(ctx)
    delegations = [call for call in calls if call.name == cab]
    if not delegations:
        return SimReply(content="", tool_calls=[(cab, {"instruction": first_instruction(ctx, user)})])
    notified = notify is not None and any(call.name == notify for call in calls)
    if not notified:  # the cab agent has just reported back: check it
        asked = [read_request(str(call.arguments.get("instruction", ""))).service for call in delegations]
        asked_service = next((service for service in reversed(asked) if service), None)
        fix = find_contradiction(user, read_evidence(visible_evidence_text(ctx)), asked_service)
        if fix is not None and len(delegations) < MAX_DELEGATIONS and ctx.chance(ctx.profile.notices_contradictions):
            return SimReply(content="", tool_calls=[(cab, {"instruction": correction_instruction(user, fix)})])
    answer = final_answer(user, ctx, cab)
    if notify is not None and not notified:
        return SimReply(content="", tool_calls=[(notify, {"instruction": f"Tell the user: {answer}"})])
    return SimReply(content=answer)


# --------------------------------------------------------------------------- cortex agent

_LEGEND = re.compile(r"^\s*([\w.\-]+):\s*([01]+)\s*$", re.MULTILINE)
_TRACE_LINE = re.compile(r"^(agent|kind|delegated to|instruction|user request|subagent reply|tool call|tool result|reply): (.*)$")


def _trace_of(ctx: SimContext) -> list[tuple[str, str]]:
    text = ctx.last_user_text()
    marker = "New step to ingest:"
    if marker in text:
        text = text.split(marker, 1)[1]
    return [(m.group(1), m.group(2)) for line in text.splitlines() if (m := _TRACE_LINE.match(line.strip()))]


def _call_sentence(name: str, args: dict[str, Any], result: str) -> str:
    data = json_or_none(result)
    if result.startswith("Error"):
        return f"called {name} with {json.dumps(args, sort_keys=True)} and got an error: {result}"
    if name == "list_rides" and isinstance(data, list):
        return f"listed rides from {args.get('start_location')} to {args.get('end_location')}: {_prices(data)}"
    if name in ("order_ride", "get_quotation") and isinstance(data, dict):
        where = f"from {data.get('start_location')} to {data.get('end_location')}"
        ride = f"{data.get('service_type')} ride {where}"
        if name == "order_ride":
            return f"booked a {ride} (ride {str(data.get('ride_id'))[:8]}, {_money(data.get('price'))}, status {data.get('status')})"
        return f"got a quote for a {ride}: {_money(data.get('price'))}"
    if name == "user_cancel_ride":
        return "cancelled the ongoing ride"
    if name.startswith("delegate"):
        target = name.removeprefix("delegate_to_").replace("_", " ") or "agent"  # delegate_to_cab_agent: 'cab agent'
        return f"delegated to the {target}: \"{args.get('instruction', '')}\""
    if "message" in name:
        return f"sent the user a message: \"{args.get('content', '')}\""
    short = result if len(result) <= 120 else result[:119] + "…"
    return f"called {name} ({short})"


def summarise_step(lines: list[tuple[str, str]]) -> str:
    """A factual one-paragraph summary of a step trace: real arguments, results, replies."""
    fields = dict(lines)
    agent = fields.get("agent", "an agent")
    kind = fields.get("kind", "")
    sentences = []
    pending: tuple[str, dict[str, Any]] | None = None
    for label, value in lines:
        if label == "tool call":
            name, _, raw = value.partition(" ")
            args = json_or_none(raw)
            pending = (name, args if isinstance(args, dict) else {})
            if name.startswith("delegate"):
                sentences.append(_call_sentence(name, pending[1], ""))
                pending = None
        elif label == "tool result" and pending is not None:
            sentences.append(_call_sentence(pending[0], pending[1], value))
            pending = None
    if pending is not None:
        sentences.append(f"called {pending[0]}")
    if kind == "delegation":
        sentences.append(f"received {fields.get('delegated to', 'the subagent')}'s reply: "
                         f"\"{fields.get('subagent reply', '')}\"")
    if "reply" in fields:
        to = "the user" if kind == "orchestrator_step" else "the orchestrator"
        sentences.append(f"replied to {to}: \"{fields['reply']}\"")
    if not sentences:
        sentences.append("took a step with no visible effect")
    return f"{agent} " + "; then ".join(sentences) + "."


def _agents_for_tool(tool: str, legend: list[tuple[str, str]]) -> set[str]:
    """The agents a delegation tool reaches: those whose name shares a word with the tool's."""
    words = set(tool.removeprefix("delegate_to_").split("_")) - {"agent", ""}
    return {agent for agent, _ in legend if words & set(agent.split("_"))}


def infer_mask(lines: list[tuple[str, str]], legend: list[tuple[str, str]]) -> str:
    """The agents a step concerns, as a mask: the agent that took it, plus its counterpart: the
    agent that gave a subagent its instruction, or the agent an orchestrator delegated to (only
    that one: the other subagents do not need it). A step that only answers the user concerns
    its own agent alone."""
    fields = dict(lines)
    width = max((len(bits) for _, bits in legend), default=1)
    source = fields.get("agent", "")
    involved = {source}
    if "instruction" in fields:  # a subagent working on someone's instruction
        involved |= {agent for agent, _ in legend if "orchestrator" in agent}
    if fields.get("delegated to"):
        involved.add(fields["delegated to"])
    for label, value in lines:
        if label == "tool call" and value.startswith("delegate"):
            involved |= _agents_for_tool(value.split(" ", 1)[0], legend)
    mask = 0
    for agent, bits in legend:
        if agent in involved:
            mask |= int(bits, 2)
    return format(mask or (1 << width) - 1, f"0{width}b")


@register_role("cortex_agent", recognise=is_cortex_call, tier=0, assumptions={
    "mask inference": {"value": "source + counterpart", "meaning": (
        "an episode is shared with the agent that took the step and the agent it worked with or for; "
        "a step that only answers the user stays with its agent")}})
def cortex_agent(ctx: SimContext) -> SimReply:
    """Summarise the new step and share it with the agents it concerns; with
    ``profile.mask_error_rate`` the mask is unusable (non-binary, too wide, all zero, or no call)."""
    lines = _trace_of(ctx)
    summary = summarise_step(lines)
    legend = _LEGEND.findall(ctx.system_text())
    width = max((len(bits) for _, bits in legend), default=1)
    tool = next((name for name in sorted(ctx.tool_names()) if "ingest" in name), None)
    mask = infer_mask(lines, legend)
    if tool is not None and ctx.chance(ctx.profile.mask_error_rate):
        mistake = ctx.rng.choice(("no_call", "non_binary", "too_wide", "all_zero"))
        if mistake == "no_call":
            return SimReply(content=f"Episode summary: {summary}")
        mask = {"non_binary": "all", "too_wide": "1" * (width + 1), "all_zero": "0" * width}[mistake]
    if tool is None:
        return SimReply(content=summary)
    return SimReply(content="", tool_calls=[(tool, {"summary": summary, "access_mask": mask})])
