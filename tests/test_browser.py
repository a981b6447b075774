"""What a learner sees in JupyterLab, in a real browser (issue 17): ``pytest -m browser``.

Starts JupyterLab on 127.0.0.1 with a fixed token over a copy of the phases (Run All and save
rewrite a notebook: the checkout's own stay untouched), opens each phase notebook with Playwright
driving Debian's ``chromium`` (launched by path: Playwright's own browser download is not needed),
runs all cells, waits until every cell ran or one failed, and asserts: no error output, no "Error
displaying widget", no raw Markdown table in any output, no stderr output of ours. Then it saves,
reloads the page and asserts the same of the reopened notebook. One screenshot per notebook goes to
the git-ignored ``out/browser/``. Notebooks run at their quick size (``MINITORCH_QUICK=1``);
tests/test_clean_checkout.py runs 01 and 03 at their default size.

Skipped, with the reason, without ``playwright``, ``chromium`` or ``jupyterlab``;
``.ci/run`` installs them so that CI always runs it.
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "minitorch-browser-test"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.browser

# things a learner must not meet in an output
RAW_TABLE = re.compile(r"^\s*\|\s*:?-{3,}", re.M)
BAD = ("Error displaying widget", "Traceback (most recent call last)")


def _missing():
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if CHROMIUM is None:
        return "chromium is not installed (apt-get install chromium)"
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        return "jupyterlab is not installed (pip install -e '.[course]')"
    return None


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    reason = _missing()
    if reason:
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("lab")
    shutil.copy(ROOT / "pyproject.toml", root)
    shutil.copytree(ROOT / "phases", root / "phases", ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    for name in ("benchmarks", "data"):             # read by the notebooks (reference runs, MNIST)
        (root / name).symlink_to(ROOT / name)
    # every cell rendered (no windowing), so that the page's text is the whole notebook's
    settings = root / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text('{"windowingMode": "none"}')
    port = _free_port()
    env = dict(os.environ, MINITORCH_QUICK="1", PYTHONPATH=str(ROOT), JUPYTERLAB_SETTINGS_DIR=str(root / "settings"))
    env.pop("MINITORCH_RESULTS_DIR", None)
    log = open(root / "jupyterlab.log", "w")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
         "--ServerApp.disable_check_xsrf=True"] + (["--allow-root"] if os.geteuid() == 0 else []), cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(120):
        if server.poll() is not None:
            break
        try:
            urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        server.terminate()
        pytest.fail("JupyterLab did not start: " + (root / "jupyterlab.log").read_text()[-2000:])
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield url, root, browser
        browser.close()
    server.terminate()
    server.wait(timeout=30)


# JavaScript run in the page: the open notebook's state, through the app JupyterLab exposes
STATE = r"""() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  if (!panel || !panel.content || !panel.sessionContext || !panel.sessionContext.session) return null;
  const kernel = panel.sessionContext.session.kernel;
  const cells = panel.content.widgets.filter(c => c.model.type === 'code');
  const outputs = cells.flatMap(c => c.model.outputs.toJSON());
  return {status: kernel ? kernel.status : 'none',
          ran: cells.filter(c => c.model.executionCount !== null).length, cells: cells.length,
          errors: outputs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue),
          stderr: outputs.filter(o => o.output_type === 'stream' && o.name === 'stderr').map(o => [].concat(o.text).join('')),
          widgets: outputs.filter(o => o.data && o.data['application/vnd.jupyter.widget-view+json']).length,
          streams: outputs.filter(o => o.output_type === 'stream').map(o => [].concat(o.text).join('')).join('\n'),
          rendered: Array.from(panel.content.node.querySelectorAll('.jp-OutputArea-output')).map(n => n.innerText).join('\n----\n')};
}"""


def _open(page, url, path):
    page.goto(f"{url}/lab/tree/{path}?reset&token={TOKEN}")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget && "
                           "window.jupyterapp.shell.currentWidget.sessionContext && "
                           "window.jupyterapp.shell.currentWidget.sessionContext.session && "
                           "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel && "
                           "window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'",
                           timeout=120_000)


def _check(state, when):
    assert state is not None, f"{when}: no notebook open"
    assert not state["errors"], f"{when}: error outputs {state['errors']}"
    for bad in BAD:
        assert bad not in state["rendered"], f"{when}: {bad!r} in an output"
    assert not state["widgets"], f"{when}: {state['widgets']} widget output(s): they do not survive a reopen"
    assert not RAW_TABLE.search(state["rendered"] + state["streams"]), f"{when}: a raw Markdown table in an output"
    ours = [s for s in state["stderr"] if "minitorch" in s.lower() or "Warning" in s]
    assert not ours, f"{when}: stderr output {ours}"


@pytest.mark.parametrize("notebook", sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "phases").glob("*/*.ipynb")))
def test_run_all_save_reopen(lab, notebook):
    url, root, browser = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        _open(page, url, notebook)
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        page.wait_for_function(f"() => {{ const s = ({STATE})(); return s && s.status === 'idle' && "
                               "(s.ran === s.cells || s.errors.length > 0); }", timeout=900_000, polling=2000)
        time.sleep(1)                               # the last outputs render
        _check(page.evaluate(STATE), f"{notebook} after Run All")
        page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
        page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=60_000)
        page.reload()
        _open(page, url, notebook)
        time.sleep(2)
        _check(page.evaluate(STATE), f"{notebook} reopened")
        shots = ROOT / "out" / "browser"
        shots.mkdir(parents=True, exist_ok=True)
        height = page.evaluate("() => { const n = window.jupyterapp.shell.currentWidget.content.node; "
                               "const inner = n.querySelector('.jp-WindowedPanel-inner'); "
                               "return Math.max(n.scrollHeight, inner ? inner.scrollHeight : 0); }")
        page.set_viewport_size({"width": 1400, "height": min(int(height) + 200, 16000)})   # the whole notebook
        time.sleep(1)
        page.screenshot(path=str(shots / (Path(notebook).stem + ".png")))
    finally:
        try:                                        # one kernel at a time: shut this one down
            page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")
        except Exception:
            pass
        page.close()
