"""Bad trace patterns and patterns that match nothing, through `methods --match` and
`resolve`: a bad glob is one error line and exit 2; an empty match is one error line
naming the files searched and the nearest names, exit 4; hostile pattern text (huge,
deeply starred, control bytes, invalid UTF-8) never crashes or hangs."""
import os

from harness import EXIT_RESOLVE, TESTDATA, expect_error, run

EXIT_USAGE = 2
BOOT_EXT = os.path.join(TESTDATA, "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/"
                        "boot-ext.oat")
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"


def test_bad_patterns_exit_2():
    cases = {
        "a.B.[c": r"no closing '\]'", "nodot": "CLASS.METHOD", "a.B.c(int": r"'\)'",
        "a.B.c(int,)": "empty parameter", "a..B.c": "empty", "a.B.": "empty method",
        ":x": "empty file", "libc.so:": "nothing after", "a.B.c\\": "escapes nothing",
        "a.B.c)": r"'\)' without", "": "empty pattern",
    }
    for pat, why in cases.items():
        expect_error(run(["methods", "--match", pat, BOOT_EXT]), EXIT_USAGE, why)
        expect_error(run(["resolve", BOOT_EXT, pat or "*"]) if pat else
                     run(["methods", "--match", "", BOOT_EXT]), EXIT_USAGE)


def test_empty_java_match_names_files_and_nearest():
    expect_error(run(["methods", "--match", "org.ccil.cowan.tagsoup.Parsr.start*", BOOT_EXT]),
                 EXIT_RESOLVE, "matched nothing", "boot-ext.oat",
                 "nearest classes: org.ccil.cowan.tagsoup.Parser")
    expect_error(run(["resolve", BOOT_EXT, "org.ccil.cowan.tagsoup.Parser.strat*"]),
                 EXIT_RESOLVE, "boot-ext.oat", r"nearest: .*Parser\.stag")


def test_empty_native_match_names_nearest():
    if not os.path.exists(LIBC):
        return
    expect_error(run(["methods", "--match", LIBC + ":opne"]), EXIT_RESOLVE,
                 "matched nothing", "libc.so.6", "nearest: open")
    expect_error(run(["methods", "--match", "libnosuchlib.so:x"]), EXIT_RESOLVE,
                 "no library libnosuchlib.so")


def test_ambiguous_resolve_lists_candidates():
    expect_error(run(["resolve", BOOT_EXT, "org.ccil.cowan.tagsoup.Parser.*(String)"]),
                 EXIT_RESOLVE, "ambiguous", "expandEntities", "prefixOf")


def test_hostile_pattern_text():
    for pat in ["a." + "*a" * 2000 + ".b", "*." + "[" * 3000, "\x01\x02.\x7f", "\xff\xfe.x",
                "a.b(" + ",".join(["int"] * 300) + ")", "x" * 5000 + ".y",
                "**." * 500 + "x.y", "a.B.c(" + "**," * 100 + "int)"]:
        res = run(["methods", "--match", pat, BOOT_EXT], timeout=20)
        if res.rc not in (EXIT_USAGE, EXIT_RESOLVE, 0):
            expect_error(res, EXIT_USAGE)
        if res.rc:
            expect_error(res, res.rc)
