"""Built-in backends. :func:`get_backend` (and importing this package) registers their providers; SDKs load lazily."""

from paperfields.extract.backends import anthropic_compat, fake, local, openai_compat, rules  # noqa: F401
from paperfields.extract.backends.base import (  # noqa: F401
    Backend,
    BackendError,
    FailureClass,
    Generation,
    GenerationParams,
    GenerationRequest,
    Usage,
    get_backend,
    known_providers,
    offered_providers,
    parse_reply,
    register_provider,
)
