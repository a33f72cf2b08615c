"""vitrine_client.toolset: the application's half of a loop with Claude's
computer toolset (computer_toolset_20260801), the gateway doing the rest.

The model answers with tool_use blocks named after the toolset's members
(left_click, type, zoom, ...). answer_turn sends the turn's computer calls to
the gateway, which runs them in order, stops at the first failure, fits
screenshots to the model's image limits and maps coordinates back, and
returns the user message that carries one tool_result per call:

    import anthropic
    from vitrine_client import VitrineClient
    from vitrine_client.toolset import TOOLSET_ENTRY, answer_turn

    claude, vc = anthropic.Anthropic(), VitrineClient()
    s = vc.create_session(image="desktop", url="https://example.org", wait=True)
    messages = [{"role": "user", "content": "Search the site for 'vitrine'."}]
    while True:
        reply = claude.messages.create(model="claude-opus-5", max_tokens=4096,
                                       tools=[TOOLSET_ENTRY], messages=messages)
        messages.append({"role": "assistant", "content": reply.content})
        if reply.stop_reason != "tool_use":
            break
        messages.append(answer_turn(vc, s["id"], reply.model_dump()))

Other tools' tool_use blocks in the same reply are the caller's to answer
(other_calls lists them); their results go in the same user message.
"""

from typing import Any, Dict, List, Mapping, Optional

from . import JSON, VitrineClient

__all__ = ["TOOLSET_TYPE", "TOOLSET_NAME", "TOOLSET_ENTRY", "MEMBERS", "NOT_EXECUTED",
           "computer_calls", "other_calls", "answer_turn"]

TOOLSET_TYPE = "computer_toolset_20260801"
TOOLSET_NAME = "computer"
#: The tools[] entry: every member on. Turn one off with
#: {"type": TOOLSET_TYPE, "configs": {"zoom": {"enabled": False}}}.
TOOLSET_ENTRY: Dict[str, Any] = {"type": TOOLSET_TYPE}
MEMBERS = ("key", "hold_key", "type", "cursor_position", "mouse_move", "left_mouse_down",
           "left_mouse_up", "left_click", "left_click_drag", "right_click", "middle_click",
           "double_click", "triple_click", "scroll", "wait", "screenshot", "zoom")
#: What every call after a failed one in the same turn is answered with.
NOT_EXECUTED = "Not executed: an earlier computer action in this turn failed."


def _content(message: Any) -> List[Any]:
    if isinstance(message, Mapping):
        return list(message.get("content") or [])
    return list(message)


def _is_computer(block: Any) -> bool:
    if not isinstance(block, Mapping) or block.get("type") != "tool_use":
        return False
    if block.get("toolset_name") is not None:
        return block.get("toolset_name") == TOOLSET_NAME
    return block.get("name") in MEMBERS


def computer_calls(message: Any) -> List[JSON]:
    """The tool_use blocks of the computer toolset in message (a Messages
    API reply as a dict, or its content list), in order."""
    return [dict(b) for b in _content(message) if _is_computer(b)]


def other_calls(message: Any) -> List[JSON]:
    """The tool_use blocks of message that are not the computer toolset's."""
    return [dict(b) for b in _content(message)
            if isinstance(b, Mapping) and b.get("type") == "tool_use" and not _is_computer(b)]


def answer_turn(vc: VitrineClient, session_id: str, message: Any,
                tool: Optional[Mapping[str, Any]] = None,
                image_limits: Optional[Mapping[str, int]] = None,
                image_format: Optional[str] = None) -> JSON:
    """Runs the computer calls of message on the session; returns the user
    message {"role": "user", "content": [tool_result, ...]} that answers
    them (empty content when message has none)."""
    calls = computer_calls(message)
    results = vc.toolset_turn(session_id, calls, tool=tool, image_limits=image_limits,
                              image_format=image_format) if calls else []
    return {"role": "user", "content": results}
