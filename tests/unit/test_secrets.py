import pytest

from deepacp import secrets
from deepacp.secrets import redact, redact_any, register_secrets, secret_values


@pytest.fixture(autouse=True)
def nothing_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials other tests handed over in this process are not these tests' business."""
    monkeypatch.setattr(secrets, "_REGISTERED", set())


def test_secrets_are_the_values_of_credential_variables() -> None:
    env = {
        "OPENAI_API_KEY": "sk-abcdefgh12345",
        "GITHUB_TOKEN": "ghp_1234567890",
        "DB_PASSWORD": "short",  # too short to redact safely
        "GIT_AUTHOR_NAME": "Ada Lovelace",
        "HOME": "/home/ada",
    }
    assert secret_values(env) == ["sk-abcdefgh12345", "ghp_1234567890"]


def test_credentials_for_an_mcp_server_are_secrets_too(monkeypatch) -> None:
    monkeypatch.setattr(secrets, "_REGISTERED", set())
    register_secrets(
        {"SERVICE_TOKEN": "svc-0123456789", "LOG_LEVEL": "debug-verbose"},
        {"Authorization": "Bearer tok-0123456789", "Accept": "application/json"},
    )
    text = "svc-0123456789 / tok-0123456789 / debug-verbose / application/json"
    assert redact(text, secret_values({})) == (
        "[redacted] / [redacted] / debug-verbose / application/json"
    )


def test_redact_any_reaches_nested_values() -> None:
    value = {"args": [{"content": "key=sk-abcdefgh12345"}], "n": 3}
    assert redact_any(value, ["sk-abcdefgh12345"]) == {
        "args": [{"content": "key=[redacted]"}],
        "n": 3,
    }


def test_url_passwords_and_pwd_variables_are_secrets() -> None:
    env = {
        "DATABASE_URL": "postgres://app:s3cret-passw0rd@db:5432/app",
        "MYSQL_PWD": "mysql-passw0rd",
        "PWD": "/home/ada/project",
        "OLDPWD": "/home/ada",
    }
    assert secret_values(env) == ["s3cret-passw0rd", "mysql-passw0rd"]


def test_a_streamed_secret_is_redacted_wherever_the_pieces_break(monkeypatch) -> None:
    key = "sk-ant-0123456789abcdef"
    monkeypatch.setattr(secrets, "secret_values", lambda: [key])
    text = f"the key is {key}, keep it"
    for cut in range(1, len(text)):
        stream = secrets.StreamRedactor()
        shown = stream.feed(text[:cut]) + stream.feed(text[cut:]) + stream.flush()
        assert shown == "the key is [redacted], keep it", cut
    stream = secrets.StreamRedactor()
    assert stream.feed("it ends with sk-ant-01") + stream.flush() == "it ends with [redacted]"
    stream = secrets.StreamRedactor()
    assert stream.feed("a word like sk-a") + stream.flush() == "a word like sk-a"


def test_a_traceback_another_handler_formatted_first_is_still_redacted(
    monkeypatch, tmp_path
) -> None:
    """An embedding app's handler (or pytest's) formats a record before ours: the traceback
    it formatted is kept on the record, and must not reach our log unredacted."""
    import logging

    from deepacp.logs import RedactSecrets

    monkeypatch.setenv("SOME_API_KEY", "sk-canary-0123456789abcdef")
    logger = logging.getLogger("deepacp.test_redaction")
    logger.propagate = False
    earlier = logging.StreamHandler(open(tmp_path / "theirs.log", "w"))  # noqa: SIM115
    ours = logging.FileHandler(tmp_path / "ours.log")
    ours.addFilter(RedactSecrets())
    for handler in (earlier, ours):
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
    try:
        try:
            raise RuntimeError("refused sk-canary-0123456789abcdef")
        except RuntimeError:
            logger.exception("call failed", stack_info=True)
    finally:
        for handler in (earlier, ours):
            logger.removeHandler(handler)
            handler.close()
    written = (tmp_path / "ours.log").read_text()
    assert "RuntimeError: refused [redacted]" in written and "Stack (most recent" in written
    assert "sk-canary" not in written
