"""Bad input: each raises the right error with the cause (and Retsu's stderr)."""

import os
import shutil
import socket
import subprocess
import sys
import textwrap

import pytest

import retsu_sqs
from retsu_sqs import (AdminError, BinaryNotFoundError, RetsuError, Server, ServerStoppedError,
                       StartError)


def test_bad_config_file(tmp_path):
    config = tmp_path / "retsu.toml"
    config.write_text("queues = [\n")
    with pytest.raises(StartError) as e:
        Server(config=config)
    assert e.value.exit_code == 2
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, RetsuError)
    assert str(config) in str(e.value)
    assert any(str(config) in line for line in e.value.stderr_tail), e.value.stderr_tail


def test_port_in_use_via_extra_args():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(StartError) as e:
            Server(args=["--port", str(port)])
    assert e.value.exit_code == 1
    assert "cannot listen on" in str(e.value)
    assert f"--port {port}" in " ".join(e.value.command)


def test_stopped_server_asked_to_advance_its_clock():
    server = Server(frozen_clock=True)
    assert server.clock.status()["frozen"] is True
    server.stop()
    server.stop()  # idempotent
    assert not server.running and server.returncode is not None
    with pytest.raises(ServerStoppedError, match="is stopped"):
        server.clock.advance(30)


def test_admin_error_carries_the_json_error(retsu_reset):
    with pytest.raises(AdminError) as e:
        retsu_reset.peek("no-such-queue")
    assert e.value.status == 404 and e.value.code == "NotFound"
    assert "no queue us-east-1/000000000000/no-such-queue" in str(e.value)


def test_missing_binary_given_explicitly(tmp_path):
    missing = tmp_path / "nowhere" / "retsu"
    with pytest.raises(BinaryNotFoundError) as e:
        Server(binary=missing)
    assert isinstance(e.value, FileNotFoundError)
    assert str(missing) in str(e.value) and "not there" in str(e.value)


def test_binary_that_exits_at_start(tmp_path):
    fake = tmp_path / "retsu"
    fake.write_text("#!/bin/sh\necho 'retsu: something went wrong' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(StartError) as e:
        Server(binary=fake)
    assert e.value.exit_code == 3
    assert e.value.stderr_tail == ["retsu: something went wrong"]
    assert "exited before printing its ready line" in str(e.value)


def test_binary_that_never_gets_ready_is_killed(tmp_path):
    fake = tmp_path / "retsu"
    pidfile = tmp_path / "pid"
    fake.write_text(f"#!/bin/sh\necho $$ > {pidfile}\necho starting >&2\nexec sleep 60\n")
    fake.chmod(0o755)
    with pytest.raises(StartError) as e:
        Server(binary=fake, start_timeout=0.5)
    assert "no ready line within 0.5 s; killed it" in str(e.value)
    assert e.value.stderr_tail == ["starting"]
    pid = int(pidfile.read_text())
    assert not os.path.exists(f"/proc/{pid}"), "the stuck process was left running"


def _lookup_in_subprocess(tmp_path, env_extra):
    """Import a copy of retsu_sqs that no install scheme holds, with PATH
    lacking retsu: the lookup must fail and say where it looked."""
    lib = tmp_path / "lib"
    shutil.copytree(os.path.dirname(retsu_sqs.__file__), lib / "retsu_sqs")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(lib), **env_extra}
    code = textwrap.dedent("""
        import retsu_sqs
        try:
            retsu_sqs.Server()
        except retsu_sqs.BinaryNotFoundError as e:
            assert isinstance(e, FileNotFoundError)
            print(e)
        else:
            raise SystemExit("found a binary")
    """)
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_missing_binary_names_every_place_looked(tmp_path):
    out = _lookup_in_subprocess(tmp_path, {})
    assert "cannot find a usable retsu binary" in out
    assert str(tmp_path / "lib" / "bin" / "retsu") in out  # beside the package
    assert "RETSU_BIN: not set" in out
    assert "PATH (/usr/bin:/bin): no executable retsu" in out


def test_non_executable_retsu_bin(tmp_path):
    not_exec = tmp_path / "retsu-not-exec"
    not_exec.write_bytes(b"\x7fELF")
    out = _lookup_in_subprocess(tmp_path, {"RETSU_BIN": str(not_exec)})
    assert f"RETSU_BIN={not_exec}: not executable" in out


def test_retsu_bin_is_used_when_nothing_is_beside_the_package(tmp_path):
    # The same copied package finds the binary through RETSU_BIN.
    lib = tmp_path / "lib"
    shutil.copytree(os.path.dirname(retsu_sqs.__file__), lib / "retsu_sqs")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(lib), "RETSU_BIN": retsu_sqs.find_retsu_bin()}
    code = "import retsu_sqs; print(retsu_sqs.find_retsu_bin())"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == env["RETSU_BIN"], run.stderr


def test_the_wheels_own_binary_is_found_first():
    found = retsu_sqs.find_retsu_bin()
    assert os.path.dirname(found) == os.path.dirname(sys.executable), found
    out = subprocess.run([found, "--version"], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "retsu " + retsu_sqs.__version__


def test_sqs_client_skips_clearly_without_boto3(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p no:cacheprovider\n")
    (tmp_path / "conftest.py").write_text("import sys\nsys.modules['boto3'] = None  # import boto3 now fails\n")
    (tmp_path / "test_needs_boto3.py").write_text("def test_it(sqs_client):\n    raise AssertionError('ran')\n")
    run = subprocess.run([sys.executable, "-m", "pytest", "-rs", str(tmp_path)], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 skipped" in run.stdout
    assert "the sqs_client fixture needs boto3: pip install boto3" in run.stdout
