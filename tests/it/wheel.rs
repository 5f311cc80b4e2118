//! The wheels of pytest-mcp-cassette (docs/pytest.md, "Wheels"): scripts/package-wheel.sh wraps
//! the built binary into a platform wheel pip installs offline into a fresh venv, where
//! `mcp-cassette` runs and the plugin finds it; the pure wheel and the source tree install too.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::record::bin;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env_remove("MCP_CASSETTE_BINARY")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Installs `what` offline into `venv`, replacing what is there.
fn pip_install(venv: &Path, what: &Path) {
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .args(["--no-index", "--no-deps", "--force-reinstall"])
        .arg(what));
}

/// The binary the plugin would run, as `venv`'s python finds it with `path` as PATH.
fn found_binary(venv: &Path, path: &str) -> Output {
    Command::new(venv.join("bin/python"))
        .args([
            "-c",
            "import pytest_mcp_cassette as m; print(m.binary_path())",
        ])
        .env("PATH", path)
        .env_remove("MCP_CASSETTE_BINARY")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Every RECORD row of a wheel names a file of the wheel with its true sha256 and size.
const CHECK_RECORD: &str = r#"
import base64, csv, hashlib, io, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
names = set(z.namelist())
record = [n for n in names if n.endswith(".dist-info/RECORD")]
assert len(record) == 1, record
rows = list(csv.reader(io.StringIO(z.read(record[0]).decode())))
assert {r[0] for r in rows} == names, ({r[0] for r in rows} ^ names)
for name, digest, size in rows:
    if name == record[0]:
        assert (digest, size) == ("", ""), name
        continue
    data = z.read(name)
    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert digest == want and int(size) == len(data), name
print(z.read(record[0].replace("RECORD", "WHEEL")).decode())
"#;

#[test]
fn the_wheel_script_packs_a_binary_pip_installs_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let dist = dir.path().join("dist");
    run(Command::new(repo().join("scripts/package-wheel.sh"))
        .args(["--binary", bin(), "--out"])
        .arg(&dist));
    let mut wheels: Vec<PathBuf> = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    wheels.sort();
    let version = env!("CARGO_PKG_VERSION");
    let prefix = format!("pytest_mcp_cassette-{version}-py3-none-");
    let names: Vec<String> = wheels
        .iter()
        .map(|w| w.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let pure = wheels[0].clone();
    let platform = wheels[1].clone();
    assert_eq!(names[0], format!("{prefix}any.whl"));
    let tag = names[1]
        .strip_prefix(&prefix)
        .and_then(|t| t.strip_suffix(".whl"))
        .unwrap_or_else(|| panic!("{names:?}"));
    if cfg!(all(
        target_os = "linux",
        target_arch = "x86_64",
        target_env = "gnu"
    )) {
        assert!(
            tag.starts_with("manylinux_2_") && tag.ends_with("_x86_64"),
            "{tag}"
        );
    }
    for wheel in [&pure, &platform] {
        let wheel_file = run(Command::new("python3")
            .args(["-c", CHECK_RECORD])
            .arg(wheel));
        let wheel_file = stdout(&wheel_file);
        let purelib = if wheel == &pure { "true" } else { "false" };
        assert!(
            wheel_file.contains(&format!("Root-Is-Purelib: {purelib}")),
            "{wheel_file}"
        );
        let tag_line = format!("Tag: py3-none-{}", if wheel == &pure { "any" } else { tag });
        assert!(wheel_file.contains(&tag_line), "{wheel_file}");
    }

    // The platform wheel: the binary lands in the venv's bin/, runs, and the plugin finds it
    // there with nothing on PATH and no $MCP_CASSETTE_BINARY.
    let venv = dir.path().join("venv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    pip_install(&venv, &platform);
    let installed = venv.join("bin/mcp-cassette");
    let out = run(Command::new(&installed).arg("--version"));
    assert!(
        stdout(&out).starts_with(&format!("mcp-cassette {version} ")),
        "{}",
        stdout(&out)
    );
    let found = found_binary(&venv, "/usr/bin:/bin");
    assert!(found.status.success(), "{found:?}");
    assert_eq!(
        PathBuf::from(stdout(&found)),
        installed.canonicalize().unwrap()
    );
    let entry_points = run(Command::new(venv.join("bin/python")).args([
        "-c",
        "from importlib.metadata import entry_points as e; print([p.value for p in e(group='pytest11')])",
    ]));
    assert_eq!(stdout(&entry_points), "['pytest_mcp_cassette.plugin']");

    // The pure wheel replaces it: no binary, and the plugin says where it looked and the fix.
    pip_install(&venv, &pure);
    assert!(!installed.exists());
    let found = found_binary(&venv, "/usr/bin:/bin");
    assert!(!found.status.success());
    let stderr = String::from_utf8_lossy(&found.stderr);
    assert!(
        stderr.contains("BinaryNotFoundError: mcp-cassette: no mcp-cassette binary found")
            && stderr.contains("set MCP_CASSETTE_BINARY"),
        "{stderr}"
    );
    // Then PATH is where it looks.
    let own_dir = Path::new(bin()).parent().unwrap();
    let found = found_binary(&venv, &format!("{}:/usr/bin:/bin", own_dir.display()));
    assert!(found.status.success(), "{found:?}");
    assert_eq!(PathBuf::from(stdout(&found)), PathBuf::from(bin()));

    // The source tree installs offline through its own backend, with no setuptools.
    pip_install(&venv, &repo().join("python/pytest-mcp-cassette"));
    let out = run(Command::new(venv.join("bin/python")).args([
        "-c",
        "import importlib.metadata as m; print(m.version('pytest-mcp-cassette'))",
    ]));
    assert_eq!(stdout(&out), version);
}

#[test]
fn the_wheel_version_is_the_crate_version() {
    let pyproject =
        std::fs::read_to_string(repo().join("python/pytest-mcp-cassette/pyproject.toml")).unwrap();
    let line = pyproject
        .lines()
        .find(|l| l.starts_with("version = "))
        .unwrap();
    assert_eq!(line, format!("version = \"{}\"", env!("CARGO_PKG_VERSION")));
}
