"""Small immutable records passed between pipeline stages."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal, get_args


@dataclass(frozen=True)
class Section:
    """One citable unit: the text under a heading, up to the next heading.

    >>> s = Section(source="a.md", heading="1. Intro", path=("Doc", "1. Intro"),
    ...             start_line=3, end_line=5, anchor="1-intro", text="hello", title="Doc")
    >>> s.breadcrumb
    'Doc › 1. Intro'
    """

    source: str  # file name relative to the seeds folder
    heading: str  # the section's own heading, plain text
    path: tuple[str, ...]  # heading path from the document title down to this heading
    start_line: int  # 1-based, inclusive, the heading line itself when there is one
    end_line: int  # 1-based, inclusive
    anchor: str  # stable id, unique within the source file
    text: str  # body text (markdown), without the heading line
    title: str  # document title
    fields: tuple[tuple[str, str], ...] = ()  # recognised FAQ fields, e.g. ("解决方法", "...")
    # What the fields are for, as the domain's FAQ convention says (bot.kb.domain.Faq.roles): ("解决方法", "fix"),
    # ("问", "question"), ("答", "answer"), ("标签", "quiet"); fix fields in the order a reply prefers them.
    roles: tuple[tuple[str, str], ...] = ()
    # Where in a converted original (bot.kb.formats) the section is: "#page=3" of a PDF, "#id" of an HTML heading.
    locator: str = ""

    @property
    def breadcrumb(self) -> str:
        return " › ".join(self.path)

    @property
    def key(self) -> str:
        """Globally unique id: ``source#anchor``."""
        return f"{self.source}#{self.anchor}"

    def field(self, name: str) -> str:
        for field_name, value in self.fields:
            if field_name == name:
                return value
        return ""

    def having(self, role: str) -> tuple[str, ...]:
        """The names of this section's fields that play ``role`` ("fix", "question", "answer", "quiet")."""
        return tuple(name for name, played in self.roles if played == role)


@dataclass(frozen=True)
class Chunk:
    """A piece of one section's text, small enough to embed well."""

    section_key: str
    ordinal: int
    text: str


@dataclass(frozen=True)
class Hit:
    """A retrieved section with its fused score and the evidence behind it."""

    section: Section
    score: float
    dense: float = 0.0
    lexical: float = 0.0
    matched_terms: tuple[str, ...] = field(default=())

    def citation(self) -> dict:
        s = self.section
        return {
            "source": s.source,
            "section": s.heading,
            "heading_path": list(s.path),
            "anchor": s.anchor,
            "lines": [s.start_line, s.end_line],
            "score": round(float(self.score), 4),
            **({"locator": s.locator} if s.locator else {}),  # a converted original's page or heading id
        }


# The closed vocabularies of the app, written once: each Literal types the records, the request models
# (pydantic checks them) and the store; the tuple of its values is derived from it, never retyped.
Tier = Literal["answer", "tentative", "none"]  # how sure the engine is (see Answer)
TIERS: tuple[Tier, ...] = get_args(Tier)
Vote = Literal["up", "down"]
VOTES: tuple[Vote, ...] = get_args(Vote)
# Why a 👎: the section cited is not the one, it is written for an old release, it is about another framework.
VoteReason = Literal["wrong_section", "didnt_help", "outdated", "not_my_framework", "other"]
VOTE_REASONS: tuple[VoteReason, ...] = get_args(VoteReason)
# Which edge recorded an event: the chat page, the portal widget, /api/*, the OpenAI-compatible /v1/*.
Origin = Literal["ui", "widget", "api", "v1"]
ORIGINS: tuple[Origin, ...] = get_args(Origin)
EventKind = Literal["question", "not_helpful", "vote"]
EVENT_KINDS: tuple[EventKind, ...] = get_args(EventKind)
Move = Literal["new", "follow_up", "retry", "switch"]
# What a turn is (bot.engine.plan): a first question; a new problem in an open case; a detail of the answer shown; a
# fuller question about the case; the fix failed; a report of what happens now; a pasted log or environment of the
# case's problem; leaving what the documents cover (another framework, device or product, an everyday question).
Act = Literal["new", "switch", "detail", "follow_up", "failed_fix", "report", "environment", "leave"]
# What the reply to a turn is (bot.engine.plan): the engine's answer; the next candidate after a fix that failed (with
# an apology); an empty message; a clicked section key; "that didn't help" with nothing open to retry; a thanks, a
# greeting, small talk or a request for a person (answered as such, not searched).
ReplyKind = Literal[
    "answer", "retry", "empty", "section", "nothing_to_retry", "thanks", "greeting", "small_talk", "person"
]
ReasonCode = Literal[
    "uncovered", "uncovered_top", "weak", "nothing", "empty", "retry_none", "old_release", "setting_conflict"
]


@dataclass(frozen=True)
class Reason:
    """Why a tier is not a plain answer, as a code and keys; :mod:`bot.answer.reasons` writes the words.

    ``subjects``: what the knowledge base or the closest section does not cover (or contradicts);
    ``closest``: the key of the closest section; ``release``/``era``: the newer release the user
    named and the old one the section was written for.
    """

    code: ReasonCode
    subjects: tuple[str, ...] = ()
    closest: str = ""
    release: str = ""
    era: str = ""


@dataclass(frozen=True)
class Package:
    """A framework package as a paste lists it: name normalised, version as printed, build variant when the
    version says it (``post112``, ``cu117``, ``cpu``)."""

    name: str
    version: str
    variant: str = ""


# What a paste's own messages say (bot.diagnose.environment reads them; bot.diagnose.compat weighs them).
Signal = Literal[
    "insufficient_driver",  # CUDA error 35: the driver is older than the runtime
    "no_kernel_image",  # CUDA error 209: the binary has no code for this GPU
    "paddle_arch",  # Paddle: GPU architecture not among the wheel's
    "paddle_cudnn_older",  # Paddle: compiled with cuDNN X, the machine has an older Y
    "paddle_cuda_older",  # Paddle: compiled with CUDA X, the machine has an older Y
    "paddle_cpu_version",  # "You are using paddlepaddle cpu version!"
    "not_compiled_with_cuda",  # Paddle/Torch/TF say the build has no CUDA
    "library_not_found",  # a CUDA/cuDNN/NCCL library was not found
    "gpu_works",  # run_check passed on a GPU, TF created a GPU device, torch.cuda.is_available() True
    "no_gpu_visible",  # list_physical_devices('GPU') == [], torch.cuda.is_available() False
    "tf_cudnn_mismatch",  # TF: loaded runtime cuDNN X but source was compiled with Y
    "torch_arch",  # Torch: GPU with capability sm_X is not compatible with the current install
    "tf_jit_arch",  # TF: not built with kernels for this compute capability (PTX JIT)
    "tf_min_capability",  # TF: GPU ignored, below the build's minimum compute capability
    "torch_cudnn_mismatch",  # Torch: compiled against cuDNN X but found runtime Y
    "gpu_build",  # the framework says it was compiled with CUDA
    "tf_not_built_with_cuda",  # TF: tf.test.is_built_with_cuda() False / get_build_info is_cuda_build False
    "pip_cuda_libs",  # CUDA from pip wheels (tensorflow[and-cuda], nvidia-cuda-runtime-cu12 …): the toolkit does not decide
    "torch_cuda_none",  # Torch: torch.version.cuda is None (collect_env "CUDA used to build PyTorch: None")
    "torch_extension_cuda",  # Torch cpp_extension: the toolkit found has another CUDA major than torch's build
]


@dataclass(frozen=True)
class Environment:
    """The GPU environment a conversation has shown (read by :func:`bot.diagnose.environment.read_environment`).
    Tuples keep every distinct value seen, in order of appearance; what was not shown stays empty."""

    driver: str | None = None  # NVIDIA driver (nvidia-smi; Windows file version 23.21.13.9135 read as 391.35)
    cuda_driver_api: str | None = None  # CUDA the driver supports (nvidia-smi "CUDA Version", Paddle "Driver API")
    driver_api_from_framework: bool = False  # that figure came from the framework (forward compatibility counts)
    cuda_runtime: str | None = None  # CUDA runtime the framework loaded (Paddle "Runtime API Version")
    cuda_toolkit: tuple[str, ...] = ()  # nvcc, version.txt, conda, "cuda 10.2" statements
    cudnn: tuple[str, ...] = ()  # cuDNN on the machine (header, conda, statements)
    cudnn_loaded: str | None = None  # cuDNN the framework loaded
    build_cuda: str | None = None  # CUDA the framework was compiled with, when printed
    build_cudnn: str | None = None  # cuDNN the framework was compiled with, when printed
    image_cuda: str | None = None  # CUDA of the Docker image named (paddle:2.1.0-gpu-cuda10.2-cudnn7)
    image_cudnn: str | None = None
    build_arch: tuple[str, ...] = ()  # architectures the build was compiled for (Paddle's warning, Torch's list)
    gpu_arch: str | None = None  # the GPU's architecture as the framework names it (Paddle: "Pascal", "Ampere")
    nccl: str | None = None
    gpus: tuple[str, ...] = ()  # GPU models as printed
    compute_capability: str | None = None  # printed by the framework
    packages: tuple[Package, ...] = ()
    docker_image: str | None = None
    docker: bool = False
    wsl: bool = False
    os: str | None = None
    python: str | None = None
    missing_libraries: tuple[str, ...] = ()
    signals: frozenset[Signal] = frozenset()
    gpu_intent: bool = False  # the text is about running on a GPU (a CPU package then reads as a mistake)
    # Each value as the user typed it: (field, value read, the paste's own words), e.g. ("cuda", "11.1",
    # "11.1 & 8.0.5"), ("package", "tensorflow-any==2.4.0", "2.4.0-rc1"); a reply quotes these, never invents them.
    typed: tuple[tuple[str, str, str], ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when nothing about versions, GPUs, packages or libraries was read."""
        return replace(self, typed=()) == Environment(gpu_intent=self.gpu_intent)

    def as_dict(self) -> dict[str, object]:
        """The known fields as JSON values (what /api/ask returns as ``environment``)."""
        out: dict[str, object] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if name == "gpu_intent" or value in (None, (), False) or value == frozenset():
                continue
            if name == "packages":
                value = [{"name": p.name, "version": p.version, "variant": p.variant} for p in value]
            elif isinstance(value, frozenset):
                value = sorted(value)
            elif name == "typed":
                value = [list(t) for t in value]
            elif isinstance(value, tuple):
                value = list(value)
            out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: dict) -> Environment:
        """The record again from :meth:`as_dict` (the chat page keeps a conversation as JSON); unknown keys dropped.

        >>> e = Environment(driver="418.67", packages=(Package("paddlepaddle-gpu", "2.5.2"),), signals=frozenset({"gpu_works"}))
        >>> Environment.from_dict(e.as_dict()) == e
        True
        """
        values: dict[str, object] = {}
        for name in cls.__dataclass_fields__:
            if name not in data:
                continue
            value = data[name]
            if name == "packages":
                value = tuple(Package(str(p["name"]), str(p["version"]), str(p.get("variant", ""))) for p in value)
            elif name == "signals":
                value = frozenset(str(v) for v in value)
            elif name == "typed":
                value = tuple((str(t[0]), str(t[1]), str(t[2])) for t in value if isinstance(t, list) and len(t) == 3)
            elif isinstance(value, list):
                value = tuple(str(v) for v in value)
            values[name] = value
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Case:
    """What a conversation is about so far (see :mod:`bot.engine.case`); empty before the first question.

    ``search``: what the case is searched by (the first question's search text and the follow-ups'
    own words); ``problem``/``setting``: subjects (error kinds, tasks / frameworks, products, OS,
    devices, tools); ``shown``: section keys shown for this case, oldest first; ``best``: the
    section last given as the answer; ``tried``: the user's own words about what they tried; ``led``: every section
    an earlier turn of the conversation led with, in this case or an earlier one (the retry rule leaves them out).
    """

    search: str = ""
    problem: frozenset[str] = frozenset()
    setting: frozenset[str] = frozenset()
    shown: tuple[str, ...] = ()
    best: str = ""
    tried: tuple[str, ...] = ()
    language: str = ""
    signature: str = ""
    turns: int = 0
    environment: Environment = Environment()  # versions shown so far (kept across the conversation's turns)
    led: tuple[str, ...] = ()  # kept across cases, oldest first
    clarified: bool = False  # the last reply was a clarifying question (never two in a row)

    @property
    def is_open(self) -> bool:
        return bool(self.search)

    @property
    def subjects(self) -> frozenset[str]:
        return self.problem | self.setting


_TIER_ORDER: dict[Tier, int] = {"none": 0, "tentative": 1, "answer": 2}


@dataclass(frozen=True)
class TurnFeatures:
    """The features a turn's act is decided from (bot.engine.plan.features_of; a learned model reads the same)."""

    open_case: bool
    rule_move: Move  # the word lists' reading (bot.engine.case.move_of)
    failed: bool  # says the fix shown did not work ("没用", "still OOM after allow_growth")
    not_helpful: bool  # only that ("没用", "that didn't help")
    elliptical: bool  # only makes sense with the case ("那多机呢？") or points back into it ("那三个 FLAGS")
    new_topic: bool  # "unrelated: …", "另外一个问题"
    is_log: bool
    shows_environment: bool  # versions, GPUs, packages pasted
    asks_more: bool
    foreign: bool  # names a framework or device the documents do not cover
    foreign_product: bool  # asks about a product the documents do not cover, naming no problem
    margin: float
    own_lead_shown: bool  # the message's own words rank a section the case led with first
    own_lead_asked_shown: bool  # and among the sections a follow-up is ranked in
    shown_similarity: float
    other_similarity: float


@dataclass(frozen=True)
class Plan:
    """The turn, decided once (bot.engine.plan.plan): what it is, what the reply is, how it is searched, what may be
    shown and how sure it may be, what the turn records. Everything after the plan reads these fields.

    ``reply``: what the reply is (:data:`ReplyKind`; only "answer" and "retry" are searched); ``language``: the
    reply's; ``search``: the message's own search text; ``joined``: the message's words before the case's ("" when
    the message is searched alone); ``title``: a long new post's first line ("" otherwise); ``own_weight``: the own
    words against the joined ones; ``exclude``: sections never shown; ``answer_bearing``: only sections that answer
    on their own; ``not_lead``: sections that may follow but not lead; ``frameworks``: only sections of these
    frameworks (empty: any); ``prefer``: sections of these frameworks first; ``lead_on``: sections covering one of
    these subjects first, when any is allowed; ``cover``: sections covering this new setting, when any does; ``focus``: the shown section a detail is about ("" otherwise); ``detail``: what of it the
    message asks for ("parameter", "command", "file", "step"; "" for the part its words match); ``floor``/``cap``: the
    tier's bounds for the judge; ``continues``: judged as a turn of its case (the follow-up model);
    ``clarify``: a clarifying question may be asked; ``says_failed``: the message says the fix failed (the retry
    rule); ``records_failure``: the turn records "did not help" about what the case showed; ``records_question``: it
    records the message as a question of its own; ``restates_case``: it is remembered as the case's question (a bare
    "没用" says nothing of its own); ``offers_person``: the reply offers a person; ``shows_signature``: the reply
    names the pasted log's error line (not after a retry).
    """

    act: Act
    move: Move
    reply: ReplyKind = "answer"
    language: str = ""
    search: str = ""
    joined: str = ""
    title: str = ""
    own_weight: float = 1.0
    exclude: tuple[str, ...] = ()
    not_lead: tuple[str, ...] = ()
    answer_bearing: bool = False
    frameworks: frozenset[str] = frozenset()
    prefer: frozenset[str] = frozenset()
    lead_on: frozenset[str] = frozenset()
    cover: frozenset[str] = frozenset()
    focus: str = ""
    detail: str = ""
    named: frozenset[str] = frozenset()
    problem: frozenset[str] = frozenset()
    setting: frozenset[str] = frozenset()
    says_failed: bool = False
    floor: Tier | None = None
    cap: Tier | None = None
    continues: bool = False
    clarify: bool = False
    records_failure: bool = False
    records_question: bool = False
    restates_case: bool = False
    offers_person: bool = False
    shows_signature: bool = True
    features: TurnFeatures | None = None

    @property
    def searched(self) -> bool:
        """The engine searches, ranks and judges this turn (an answer, or the next candidate after a failed fix)."""
        return self.reply in ("answer", "retry")

    def bound(self, tier: Tier) -> Tier:
        """The judge's tier within the plan's bounds.

        >>> Plan("failed_fix", "retry", floor="tentative", cap="tentative").bound("answer")
        'tentative'
        >>> Plan("report", "retry", floor="tentative").bound("none"), Plan("new", "new").bound("none")
        ('tentative', 'none')
        """
        if self.floor is not None and _TIER_ORDER[tier] < _TIER_ORDER[self.floor]:
            tier = self.floor
        if self.cap is not None and _TIER_ORDER[tier] > _TIER_ORDER[self.cap]:
            tier = self.cap
        return tier


@dataclass(frozen=True)
class Answer:
    """What the engine says about one question.

    ``tier`` is how sure the engine is (decided in :mod:`bot.engine.retrieve`, phrased in :mod:`bot.answer.reply`):

    - ``answer``: the first hit answers the question;
    - ``tentative``: the hits are the closest material but may not apply; ``reason`` says why in one line;
    - ``none``: nothing close; ``hits`` are at most pointers.
    """

    query: str  # the user's text as received (after the size limit)
    language: str  # "zh" or "en": the language to reply in
    tier: Tier
    hits: tuple[Hit, ...]
    signature: str = ""  # error signature when the input was a pasted log, else ""
    search_text: str = ""  # what was actually searched (the signature for logs)
    truncated_from: int = 0  # original length in characters when the input was cut, else 0
    confidence: float = 0.0  # calibrated 0..1 probability that the first hit answers the question
    reason: Reason | None = None  # why the tier is not "answer" (None for an answer); words in bot.answer.reasons
    subjects: tuple[str, ...] = ()  # what the question is specifically about (frameworks, products, ...)
    uncovered: tuple[str, ...] = ()  # those subjects the first hit does not cover
    worth_showing: int = 1  # leading hits close enough to the first to show beside it (decided by the engine)
    move: Move = "new"  # how the message moved the conversation's case (bot.engine.case)
    act: Act = "new"  # what the turn is, decided once by its plan (bot.engine.plan)
    # A detail of the answer shown: the key of the section it is about (the reply shows its matching part), else "".
    focus_key: str = ""
    case: Case = field(default_factory=Case)  # the case after this turn, its shown sections included
    plan: Plan = Plan("new", "new")  # the turn's plan (bot.engine.plan): everything after the engine reads it
    # A later turn (not a retry) that leads with a section an earlier turn led with: the 0-based lines of that
    # section's text matching the new detail, where the reply opens it (bot.engine.case.matching_lines).
    focus: tuple[int, ...] = ()

    @property
    def answered(self) -> bool:
        return self.tier == "answer"

    def to_json(self) -> dict:
        return {
            "tier": self.tier,
            "answered": self.answered,
            "reason": self.reason.code if self.reason else "",
            "language": self.language,
            "signature": self.signature or None,
            "confidence": round(self.confidence, 4),
            "truncated_from": self.truncated_from or None,
            "hits": [h.citation() for h in self.hits],
        }


@dataclass(frozen=True)
class Event:
    """Something the edge (chat UI, API) records after a turn; the conversation never writes itself.

    ``kind``: ``question`` (every question asked, with its tier), ``not_helpful`` ("that didn't help"),
    ``vote`` (👍/👎, with an optional ``reason``: wrong_section | didnt_help | outdated | not_my_framework | other).
    """

    kind: EventKind
    question: str
    language: str
    tier: Tier | Literal[""] = ""
    confidence: float = 0.0
    cited: tuple[str, ...] = ()
    signature: str = ""
    vote: Vote | None = None
    reason: VoteReason | Literal[""] = ""
    answer_id: str = ""  # which answer a vote is about: one vote per answer, the last one counts
    comment: str = ""  # a vote's free text (a 👎's "what was wrong", at most bot.limits.VOTE_COMMENT_CHARS)
    origin: Origin | Literal[""] = ""  # which edge recorded it (set by the edge; the store says "app" if empty)
