"""The shapes of the agent-memory public HTTP API: what the gateway and the query service answer.

One declaration per answer, used twice: the services name them as their routes'
``response_model`` (so ``/openapi.json`` describes every answer, and an answer that does not
match is a 500 in the tests, not a surprise in a client), and ``agent_memory_client`` returns
them as its typed dicts. They are ``TypedDict`` rather than models because a JSON answer *is* a
dict: a key that is absent stays absent (``NotRequired``), one that is ``null`` stays ``null``,
and a client reads them without parsing anything. Each is closed (``extra="forbid"``): a key a
route returns must be declared here.

Timestamps are strings on the wire (RFC 3339, as orjson writes them); the services hand over
``datetime`` values and the ``Timestamp`` type renders them.
"""

from agent_memory_api.common import ErrorBody, Health, Ready, Timestamp
from agent_memory_api.episodes import (
    ActionIn,
    ActionsAdded,
    CurateAnswer,
    CurateResult,
    Episode,
    LessonIn,
    PlaybookAnswer,
    PlaybookEntry,
    RecordedAction,
    SimilarEpisodes,
)
from agent_memory_api.events import Accepted, Event, EventIn, EventPage, Refusal
from agent_memory_api.search import (
    SearchExplain,
    SearchResponse,
    SearchResult,
    SearchTimeRange,
)
from agent_memory_api.status import ConsumerStatus, Status
from agent_memory_api.toc import (
    GripAnswer,
    NodeAnswer,
    NodeListing,
    NodeSummary,
    PinAnswer,
    TocAt,
    TocChildren,
    TocSearchAnswer,
    TocYears,
)

__all__ = [
    "Accepted",
    "ActionIn",
    "ActionsAdded",
    "ConsumerStatus",
    "CurateAnswer",
    "CurateResult",
    "Episode",
    "ErrorBody",
    "Event",
    "EventIn",
    "EventPage",
    "GripAnswer",
    "Health",
    "LessonIn",
    "NodeAnswer",
    "NodeListing",
    "NodeSummary",
    "PinAnswer",
    "PlaybookAnswer",
    "PlaybookEntry",
    "Ready",
    "RecordedAction",
    "Refusal",
    "SearchExplain",
    "SearchResponse",
    "SearchResult",
    "SearchTimeRange",
    "SimilarEpisodes",
    "Status",
    "Timestamp",
    "TocAt",
    "TocChildren",
    "TocSearchAnswer",
    "TocYears",
]
