"""The engine stays independent of the UI and of vendor SDKs outside their adapters."""

import ast
from pathlib import Path

from . import APP_ROOT

CORE = APP_ROOT / "graphrag_core"
CLI = APP_ROOT / "graphrag_cli"
UI_PACKAGES = {"streamlit", "plotly", "graphrag_app"}
VENDOR_ADAPTERS = {"openai": {"llm/openai_model.py"}}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_core_never_imports_the_ui():
    offenders = {
        str(path.relative_to(CORE)): sorted(imported_roots(path) & UI_PACKAGES)
        for path in CORE.rglob("*.py")
        if imported_roots(path) & UI_PACKAGES
    }
    assert offenders == {}


def test_the_command_line_imports_no_app_and_the_engine_no_command_line():
    """``graphrag_cli`` is a front end over the engine only; the engine's one import of it is
    ``python -m graphrag_core`` handing over (``graphrag_core/__main__.py``)."""
    cli_offenders = {
        str(path.relative_to(CLI)): sorted(imported_roots(path) & UI_PACKAGES)
        for path in CLI.rglob("*.py")
        if imported_roots(path) & UI_PACKAGES
    }
    assert cli_offenders == {}
    core_offenders = [
        str(path.relative_to(CORE)) for path in CORE.rglob("*.py") if "graphrag_cli" in imported_roots(path) and path != CORE / "__main__.py"
    ]
    assert core_offenders == []
    assert "graphrag_cli" in imported_roots(CORE / "__main__.py")


def test_vendor_sdks_only_in_their_adapters():
    for vendor, allowed in VENDOR_ADAPTERS.items():
        users = {str(p.relative_to(CORE)) for p in CORE.rglob("*.py") if vendor in imported_roots(p)}
        assert users <= allowed, f"{vendor} imported outside its adapter: {sorted(users - allowed)}"


def test_shared_pages_do_not_show_tracebacks_or_server_paths() -> None:
    import tomllib

    config = tomllib.loads((APP_ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] in ("type", "none")  # details go to the log


def test_every_public_name_of_the_package_resolves() -> None:
    """``__all__`` of ``graphrag_core`` holds the issues' public names; some are imported on first
    use (index loading, model adapters, the cache), and those must resolve too."""
    import graphrag_core
    from graphrag_core.index import load_index, save_index

    from graphrag_core import load_index as top_load, save_index as top_save  # issue 3

    assert (top_load, top_save) == (load_index, save_index)
    assert {"load_index", "save_index", "OpenAIChatModel", "OfflineChatModel", "SqliteMapCache", "ModelSettings", "build_chat_model"} <= set(graphrag_core.__all__)
    for name in graphrag_core.__all__:
        assert getattr(graphrag_core, name) is not None, name
