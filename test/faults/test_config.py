"""Bad configs: files that are missing, unreadable, empty, huge or not files;
every class of textproto syntax error; binary protobuf damage; every class of
semantic (validation) error.  Each must end with exit 3 and one error line,
before anything is loaded or attached."""
import os
import stat
import threading

from harness import (EXIT_CONFIG, EXIT_USAGE, as_nobody, check, expect_error, run, target,
                     tmpdir, write_config)

NATIVE = target("target_native")
PROBE = ('probe_configs { bpf_name: "prog_GenericInstrumentation_uprobe_call_detail" '
         f'file_paths: "{NATIVE}" method_signature: "ups_target_fn" }}')
MAP = 'bpf_maps: "map_GenericInstrumentation_call_detail_buf"'


def task(*body):
    return "tasks {\n  " + "\n  ".join(body) + "\n}\n"


def run_config(path, *extra):
    return run(["run", path, "--duration", "1", "--no-statsd"] + list(extra))


def expect_config_error(text, *patterns, name="config.textproto", extra=()):
    """text: str, or bytes written as they are (invalid UTF-8)."""
    path = os.path.join(tmpdir(), name)
    with open(path, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode())
    expect_error(run_config(path, *extra), EXIT_CONFIG, *patterns)


# ---- the file itself ----------------------------------------------------------


def test_missing_file():
    expect_error(run_config("/nonexistent/uprobestats.textproto"), EXIT_CONFIG,
                 "no such file")


def test_directory():
    expect_error(run_config(tmpdir()), EXIT_CONFIG, "directory")


def test_empty_file():
    expect_config_error("", "no tasks")


def test_only_comments_and_blanks():
    expect_config_error("# nothing here\n\n   \n# still nothing\n", "no tasks")


def test_unreadable_as_nobody():
    tmp = tmpdir()
    os.chmod(tmp, 0o755)
    path = write_config(tmp, task(PROBE, MAP))
    os.chmod(path, 0o600)
    res = run(["check", path, "--no-resolve"], prefix=as_nobody())
    expect_error(res, EXIT_CONFIG, "permission denied")


def test_pipe_fed_garbage():
    """Configs may come through a pipe (process substitution): garbage from
    a FIFO is a config error like garbage from a file."""
    path = os.path.join(tmpdir(), "fifo")
    os.mkfifo(path)

    def feed():
        with open(path, "wb") as f:
            f.write(b"tasks { probe_configs { bpf_name: \"x\" \x00\xff garbage")
    t = threading.Thread(target=feed, daemon=True)
    t.start()
    expect_error(run_config(path), EXIT_CONFIG)
    t.join(5)


def test_huge_file_100mb():
    """100 MB of comments: refused quickly with a size limit, or read in
    bounded time and found to hold no tasks."""
    path = os.path.join(tmpdir(), "huge.textproto")
    line = b"# " + b"x" * 97 + b"\n"
    with open(path, "wb") as f:
        f.write(line * (100 * 1024 * 1024 // len(line)))
    res = run(["run", path, "--duration", "1", "--no-statsd"], timeout=60)
    os.unlink(path)
    expect_error(res, EXIT_CONFIG, "too (large|big)|no tasks|limit")


def test_huge_sparse_binary_100mb():
    path = os.path.join(tmpdir(), "huge.pb")
    with open(path, "wb") as f:
        f.truncate(100 * 1024 * 1024)
    res = run(["run", path, "--duration", "1", "--no-statsd"], timeout=60)
    os.unlink(path)
    expect_error(res, EXIT_CONFIG)


# ---- textproto syntax ---------------------------------------------------------


SYNTAX = {
    "unclosed_brace": ("tasks { " + PROBE, r"expected '}'|end of file"),
    "extra_close_brace": (task(PROBE, MAP) + "}\n", r"'}'|unexpected"),
    "unterminated_string": ('tasks { probe_configs { bpf_name: "abc\n } }', "string|quote"),
    "bad_escape": (r'tasks { probe_configs { bpf_name: "a\q" } }', "escape"),
    "unknown_field": (task(PROBE, MAP, "no_such_field: 1"), "no_such_field"),
    "unknown_message_field": ("tasks { no_such_block { } }", "no_such_block"),
    "string_for_int": (task(PROBE, MAP, 'duration_seconds: "ten"'), "duration_seconds"),
    "int_for_string": ("tasks { probe_configs { bpf_name: 12 } }", "bpf_name"),
    "int_overflow": (task(PROBE, MAP, "duration_seconds: 99999999999999999999999"),
                     "range|overflow|too large"),
    "bad_number": (task(PROBE, MAP, "duration_seconds: 12abc"), "number|duration_seconds"),
    "missing_value": (task(PROBE, MAP, "duration_seconds: }"), "duration_seconds|value"),
    "scalar_as_message": ("tasks: 5\n", "tasks"),
    "message_as_scalar": ('tasks { probe_configs: "x" }', "probe_configs"),
    # Text that does not look like textproto is read as binary, and the
    # error says so.
    # ... but a NUL alone does not make it binary: the lexer says where it is.
    "nul_byte": ("tasks {\0 }\n", r":1:8: unexpected byte 0x00"),
    "control_character": ("tasks {\x01 }\n", "binary"),
    "invalid_utf8_in_string": (task(PROBE.replace("prog_GenericInstrumentation_uprobe_call_detail",
                                                  "@@"), MAP).encode().replace(b"@@", b"\xff\xfe"),
                               "unknown bpf_name"),
    "deep_nesting": ("tasks { " * 5000 + "}" * 5000, "deep|nest|depth|tasks"),
    "repeated_singular_field": (task(PROBE, MAP, "duration_seconds: 1",
                                     "duration_seconds: 2"), "duration_seconds"),
}


def _syntax_case(text, pattern):
    def case():
        expect_config_error(text, pattern)
    return case


for _name, (_text, _pat) in SYNTAX.items():
    globals()[f"test_syntax_{_name}"] = _syntax_case(_text, _pat)


# ---- binary protobuf ------------------------------------------------------------


def write_binary(data):
    path = os.path.join(tmpdir(), "config.pb")
    with open(path, "wb") as f:
        f.write(data)
    return path


BINARY = {
    # field 1 (tasks), length 100, but 2 bytes follow
    "length_past_end": b"\x0a\x64\x12\x00",
    # a varint that never ends
    "endless_varint": b"\x08" + b"\xff" * 12,
    # field number 0
    "field_zero": b"\x00\x01",
    # wire type 7 does not exist
    "bad_wire_type": b"\x0f\x01",
    # tasks as a varint instead of a message
    "wrong_wire_type": b"\x08\x01",
    # a start-group with no end
    "open_group": b"\x0b\x10\x01",
    # length varint larger than 2^63
    "huge_length": b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
}


def _binary_case(data):
    def case():
        path = write_binary(data)
        expect_error(run_config(path, "--config-format", "binary"), EXIT_CONFIG)
    return case


for _name, _data in BINARY.items():
    globals()[f"test_binary_{_name}"] = _binary_case(_data)


def test_binary_nested_1000_deep():
    # tasks { probe_configs { ... } } nested far beyond the schema
    data = b""
    for _ in range(1000):
        data = b"\x0a" + _varint(len(data)) + data
    expect_error(run_config(write_binary(data), "--config-format", "binary"), EXIT_CONFIG)


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def test_text_read_as_binary():
    path = write_config(tmpdir(), task(PROBE, MAP))
    expect_error(run_config(path, "--config-format", "binary"), EXIT_CONFIG)


# ---- semantic errors --------------------------------------------------------------


SEMANTIC = {
    "task_without_probe": (task(MAP), "probe"),
    "unknown_program": (task(PROBE.replace("call_detail", "no_such_prog"), MAP),
                        "unknown bpf_name"),
    "missing_program": (task(f'probe_configs {{ file_paths: "{NATIVE}" '
                             'method_signature: "ups_target_fn" }', MAP), "bpf_name"),
    "unknown_map": (task(PROBE, 'bpf_maps: "map_no_such_map"'), "map"),
    "probe_without_method": (task('probe_configs { bpf_name: '
                                  '"prog_GenericInstrumentation_uprobe_call_detail" '
                                  f'file_paths: "{NATIVE}" }}', MAP), "method"),
    "malformed_java_signature": (task(PROBE.replace('"ups_target_fn"',
                                                    '"void a.b.C.m(int"'), MAP),
                                 "signature|method"),
    "zero_duration": (task(PROBE, MAP, "duration_seconds: 0"), "duration"),
    "negative_duration": (task(PROBE, MAP, "duration_seconds: -5"), "duration"),
    "atom_without_id": (task(PROBE, MAP, "statsd_logging_config { }"), "atom"),
    "argument_position_out_of_range": (
        task(PROBE.replace('"ups_target_fn"', '"void a.b.C.m(int)"'), MAP,
             "statsd_logging_config { atom_id: 915 primitive_argument_positions: 7 }"),
        "position"),
    "contradictory_target_selection": (
        task(PROBE, MAP, 'target_process_name: "a"',
             "target_process_selection: ANY_APP_PROCESS_ON_START"), "target"),
}


def _semantic_case(text, pattern):
    def case():
        expect_config_error(text, pattern)
    return case


for _name, (_text, _pat) in SEMANTIC.items():
    globals()[f"test_semantic_{_name}"] = _semantic_case(_text, _pat)


# ---- the command line around the config ----------------------------------------------


def test_missing_config_argument():
    expect_error(run(["run"]), EXIT_USAGE, "CONFIG")


def test_bad_duration_option_is_one_line():
    path = write_config(tmpdir(), task(PROBE, MAP))
    expect_error(run(["run", path, "--duration", "x"]), EXIT_USAGE, "duration")


def test_bad_pid_option():
    path = write_config(tmpdir(), task(PROBE, MAP))
    expect_error(run(["run", path, "--duration", "1", "--pid", "-3"]), EXIT_USAGE, "pid")


def test_bad_ringbuf_size_option():
    path = write_config(tmpdir(), task(PROBE, MAP))
    expect_error(run(["run", path, "--duration", "1", "--ringbuf-size", "lots"]), EXIT_USAGE,
                 "lots|bytes|ringbuf")
    # not a power of two: refused (as --help says), never rounded silently
    for bad, near in (("3", ""), ("5000", "nearest above: 8192"), ("0", ""),
                      (str(3 << 20), "nearest above: 4194304")):
        expect_error(run(["run", path, "--duration", "1", "--ringbuf-size", bad]), EXIT_USAGE,
                     "--ringbuf-size takes a power of two", f"not '{bad}'", near)


def test_unknown_config_format_option():
    path = write_config(tmpdir(), task(PROBE, MAP))
    expect_error(run(["run", path, "--config-format", "yaml"]), EXIT_USAGE, "format")


def test_config_mode_bits_irrelevant_for_root():
    """Root reads a 000 file (root bypasses modes): not an error case, a
    control that the unreadable case above is about the user."""
    path = write_config(tmpdir(), task(PROBE, MAP))
    os.chmod(path, 0)
    res = run(["check", path, "--no-resolve"])
    os.chmod(path, stat.S_IRUSR)
    check(res.rc == 0, "root reading a mode-000 config: " + res.describe())
