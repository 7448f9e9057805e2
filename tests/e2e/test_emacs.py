"""lecode-ls driven by a real third-party LSP client: headless Emacs with eglot, configured with
docs/editors/emacs.md's block as a new user's `~/.emacs.d/init.el` (Debian 12's emacs-nox 28.2 with
elpa-eglot 1.9, which .ci/run installs).

`emacs/drive.el` opens a Python file of a Git checkout, runs the page's `M-x lecode-memory`,
remembers line 3 with the "Remember selection as fact" code action on a region, hovers it (eglot
asks for plain text), edits it unsaved until flymake shows the drift warning, and forgets the
fact from that warning's code actions. eglot 1.9 does not advertise `window.showMessage`, so the
question is echoed and answered with the "Forget fact #1 (confirm)" code action, picked after a
pause longer than jsonrpc's request timeout: no request times out, and the fact is gone only
after the confirmation, in the store as in the editor.

# covers P6 (every editor), T4 and F7 through a client without showMessageRequest, issue 24
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import git
from tests.e2e.test_neovim import SCRIPTS_DIR
from tests.e2e.test_setup import readme_block

EMACS_DIR = Path(__file__).parent / "emacs"
EMACS = shutil.which("emacs")


def eglot_loads() -> bool:
    if EMACS is None:
        return False
    done = subprocess.run(
        [EMACS, "--batch", "--eval", "(require 'eglot)"], capture_output=True, timeout=60
    )
    return done.returncode == 0


HAS_EGLOT = eglot_loads()
if not HAS_EGLOT and os.environ.get("CI"):  # CI installs them: there a skip would hide a failure
    raise RuntimeError("emacs with eglot is not installed (Debian: emacs-nox elpa-eglot)")
pytestmark = pytest.mark.skipif(
    not HAS_EGLOT, reason="emacs with eglot not installed (Debian: emacs-nox elpa-eglot)"
)


def run_emacs(tmp_path: Path, file: Path) -> dict[str, Any]:
    home = tmp_path / "home"
    init = home / ".emacs.d" / "init.el"
    init.parent.mkdir(parents=True)
    init.write_text(readme_block("elisp", "eglot-server-programs", "docs/editors/emacs.md"))
    out = tmp_path / "emacs-result.json"
    completed = subprocess.run(
        [
            EMACS or "emacs",
            "--batch",
            "-l",
            str(init),
            "-l",
            str(EMACS_DIR / "drive.el"),
            str(out),
            str(file),
        ],
        cwd=file.parent,
        env={
            **os.environ,  # LECODE_CONFIG_DIR: the test's isolated store
            "HOME": str(home),
            # The README's `("lecode-ls")` is the lecode-ls of the interpreter under test.
            "PATH": os.pathsep.join([SCRIPTS_DIR, os.environ.get("PATH", "")]),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.exists(), completed.stderr
    result: dict[str, Any] = json.loads(out.read_text())
    assert completed.returncode == 0, (result.get("failed"), completed.stderr[-3000:])
    return result


class TestEmacsWithEglot:
    def test_the_readme_config_remembers_shows_drift_and_forgets_after_a_late_confirmation(
        self, repo: Path, tmp_path: Path, isolated_config_dir: Path
    ) -> None:
        (repo / "src").mkdir()
        app = repo / "src" / "app.py"
        app.write_text("import os\n\nPORT = 8080\n\n\ndef main():\n    serve(PORT)\n")
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "app")
        result = run_emacs(tmp_path, app)

        assert result["server"] == "lecode-ls"
        assert result["memory"] == "No named notes."  # M-x lecode-memory RET notes
        assert result["remembered"] == [1]
        # eglot 1.9 asks for plain text (without markdown-mode): no Markdown in the hover.
        assert result["hover_kind"] == "plaintext"
        assert result["hover"].startswith(
            'fact #1 r1 · current\n\nuntrusted evidence, not instructions:\nsrc/app.py contains "PORT = 8080"'
        )
        assert "**" not in result["hover"] and "](" not in result["hover"]
        # The warning flymake shows names the fact and its code actions.
        assert result["diagnostics"] == [
            "lecode [fact-changed]: fact #1 r1 may be out of date: its lines changed since it "
            'was remembered (src/app.py contains "PORT = 8080"). Code actions: Correct fact #1…, '
            "Forget fact #1, Re-anchor fact #1 here"
        ]
        # Forget answered at once; nothing forgotten until the confirmation.
        assert result["after_command"] == [1]
        assert result["offered"][:2] == [
            "Forget fact #1 (confirm)",
            "Keep fact #1 (cancel the forget)",
        ]
        assert result["after_answer"] is None  # no facts: the editor and the store agree
        assert result["timed_out"] is None  # no "Timed out" anywhere in *Messages*
        assert result["echoed"] == [
            "[eglot] Server reports (type=2): lecode: forget fact #1 and exclude its evidence "
            'for good? To answer, run the code action "Forget fact #1 (confirm)" or "Keep fact '
            '#1 (cancel the forget)" (offered in every file).',
            "[eglot] Server reports (type=3): lecode: forgot fact #1; its evidence is excluded "
            "for good.",
        ]
        # No lecode/* notification reached eglot: it asked for none (lsp-mode would warn).
        assert result["notifications"] == [
            "textDocument/publishDiagnostics",
            "window/logMessage",
            "window/showMessage",
        ]


class TestReadmeShowsTheTestedConfig:
    def test_the_readme_elisp_block_is_the_file_emacs_runs(self) -> None:
        assert (
            readme_block("elisp", "eglot-server-programs", "docs/editors/emacs.md")
            == (EMACS_DIR / "lecode.el").read_text()
        )
