"""Checks made once, before any notebook kernel starts: a bad setting stops the run in seconds
with one sentence naming the environment variable at fault, instead of failing inside every
kernel (or, worse, recording every episode as an error and reporting "done")."""

from __future__ import annotations

import os
import sys

from psit_lib.cli.errors import CliError
from psit_lib.llm.errors import ConfigurationError
from psit_lib.llm.model_settings import INLINE_SOURCE
from psit_lib.llm.server_limits import format_endpoint_slots, plan_sizing, probe as probe_server
from psit_lib.llm.settings import LLMSettings
from psit_lib.runs.backend import list_served_models
from psit_lib.runs.checkpoints import checkpoint_mode
from psit_lib.runs.params import ModelRunParams
from psit_lib.studies.psit.protocol.budget import PAPER_BUDGET
from psit_lib.wire import SIM_MODEL_NAME

PROBE_TIMEOUT = 3.0


def _reason(exc: BaseException) -> str:
    code = getattr(exc, "status_code", None)
    if code:
        return f"it answered HTTP {code}"
    inner = exc.__cause__ or exc  # the connection error under the openai client's own
    return str(inner) or type(inner).__name__


def check_settings(env=None, *, probe: bool = True, size: bool = True, say=None) -> LLMSettings:
    """The run's model settings, checked; a CliError with one sentence otherwise. On a real
    endpoint (``probe``), the servers are asked what they serve and (``size``) the run is sized by
    it (:func:`size_by_server`), said in one line through ``say`` (default: stderr)."""
    try:
        settings = LLMSettings.from_env(env)
        checkpoint_mode(env)
    except ConfigurationError as exc:
        raise CliError(str(exc)) from None
    if env is None:  # the notebooks run in notebooks/: hand them the absolute paths that were read
        for name, path in (("PSIT_PROMPTS_FILE", settings.prompts_file),
                           ("PSIT_MODEL_SETTINGS", settings.model_settings_source)):
            if path and path != INLINE_SOURCE:
                os.environ[name] = path
    if settings.simulated:
        from psit_lib.sim.profiles import UnknownProfileError, get_profile

        profile = settings.model.split(":", 1)[1] if settings.model.startswith(SIM_MODEL_NAME + ":") else settings.sim_profile
        source = "PSIT_MODEL" if settings.model.startswith(SIM_MODEL_NAME + ":") else "PSIT_SIM_PROFILE"
        try:
            get_profile(profile)
        except UnknownProfileError as exc:
            raise CliError(f"{source}: {exc}") from None
    if settings.backend != "openai" or not probe:
        return settings
    model = settings.model
    for url in settings.urls_for(model):
        source = "PSIT_MODEL_ENDPOINTS" if model in settings.model_endpoints else "PSIT_BASE_URLS"
        try:
            models = [str(m.get("id")) for m in list_served_models(settings, url, timeout=PROBE_TIMEOUT)]
        except Exception as exc:  # refused, timed out, an HTTP error, a body that is no model list
            raise CliError(f"{source}: {url} does not answer GET /models ({_reason(exc)}); "
                           "start the server or fix the URL") from None
        if models and model not in models and not (model.startswith(SIM_MODEL_NAME) and SIM_MODEL_NAME in models):
            raise CliError(f"PSIT_MODEL={model!r} is not served at {url} (it serves {', '.join(models[:8])})")
    return size_by_server(settings, env, say=say) if size else settings


def size_by_server(settings: LLMSettings, env=None, *, say=None) -> LLMSettings:
    """Size the run by what each replica of its model reports (calls in flight from slots, a timeout from the
    measured speed, each unless the user set it), handed to the kernels through the environment when ``env`` is None."""
    from psit_lib.llm.client import SamplingDefaults  # here: a bad setting stops the run before this loads

    source = os.environ if env is None else env
    key = settings.api_key.get_secret_value() if settings.api_key else None
    urls = settings.urls_for(settings.model)
    own = settings.request_settings()
    max_tokens = own.max_tokens if own is not None and own.max_tokens else SamplingDefaults().max_tokens
    sizing = plan_sizing([probe_server(url, settings.model, key) for url in urls], env=source,
                         concurrency=settings.concurrency, timeout=settings.timeout, max_tokens=max_tokens)
    update: dict = {}
    if sizing.endpoint_slots:
        update["endpoint_slots"] = {**settings.endpoint_slots, **sizing.endpoint_slots}
        if env is None:
            os.environ["PSIT_ENDPOINT_CONCURRENCY"] = format_endpoint_slots(update["endpoint_slots"])
    if sizing.timeout is not None:
        update["timeout"] = sizing.timeout
        if env is None:
            os.environ["PSIT_TIMEOUT"] = f"{sizing.timeout:g}"
    (say or (lambda line: print(f"psit: {line}", file=sys.stderr, flush=True)))(sizing.message)
    return settings.model_copy(update=update) if update else settings


def budget_note(settings: LLMSettings, models: list[str] | None = None, max_tokens: int = PAPER_BUDGET) -> str | None:
    """One line before a real run whose models have no request settings of their own: their host replies are capped
    (at the run's ``max_tokens`` or :data:`REPLY_CAP`, whichever is lower: :func:`reply_budget`) below the
    private-state study's budget, so its Table 1 cells will read "not comparable"; None otherwise."""
    from psit_lib.llm.model_settings import reply_budget

    if settings.simulated:
        return None
    bare = [m for m in (models or [settings.model]) if not (settings.model_settings.get(m) or None)
            or not settings.model_settings[m].max_tokens]
    if not bare:
        return None
    cap = reply_budget("hangman_host", max_tokens, None, simulated=False)
    return (f"psit: no max_tokens of its own for {', '.join(bare)} (PSIT_MODEL_SETTINGS): host replies are capped at "
            f"{cap} tokens where the study used {PAPER_BUDGET:,}, so Table 1 cells will read 'not comparable'; "
            "PSIT_MODEL_SETTINGS=notebooks/params/study_model_settings.yaml gives the study's budgets")


def say_budget(settings: LLMSettings, params: dict[str, dict]) -> None:
    """Print :func:`budget_note` for the models the notebooks name (else the run's model), when there is one and the
    run holds a notebook of the private-state study (whose hosts the cap acts on)."""
    from psit_lib.studies.registry import notebooks

    private_state = [values for nb, values in params.items() if notebooks().get(nb, ("",))[0] == "psit"]
    if not private_state:
        return
    named = sorted({str(m) for values in params.values() for m in values.get("models") or []})
    default = ModelRunParams.model_fields["max_tokens"].default
    note = budget_note(settings, named or None, min(int(v.get("max_tokens") or default) for v in private_state))
    if note:
        print(note, file=sys.stderr, flush=True)
