#!/bin/sh
# A checkout for `python -m benchmarks.stages --against DIR` whose default reader is the SAX
# driver: a copy of the package (its built kernel included) with the reader registered, the
# kernel's other loops kept active for its pages, this folder's kernelsax beside it.
#   sh docs/experiments/sax_reader/stages_tree.sh /tmp/tree_sax   (from the repository root,
#   after both build_ext steps and the kernel's own)
set -e
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
rm -rf "$dir/scrapy_tagratio"
cp -r scrapy_tagratio "$dir/"
ln -sfn "$(pwd)/benchmarks" "$dir/benchmarks"
cp "$here"/kernelsax*.so "$dir/"
cat >> "$dir/scrapy_tagratio/reader.py" <<'PATCH'


# speed12 prototype: libxml2's SAX events into the kernel's _Events, no tree.
def _read_sax(
    text: str, check_deadline: Callable[[], None], utf8: bytes | None = None
) -> PageEvents:
    import kernelsax

    prepared = parser_input(text, utf8)
    data = prepared_utf8(text, prepared, utf8) or prepared.encode("utf-8", "replace")
    recorder = _Recorder(check_deadline)
    kernelsax.sax_walk(data, recorder, _TAG_NAMES, SIGNAL_ATTRIBUTES, SIGNAL_ELEMENTS, _BATCH)
    return recorder.close()


def active_kernel() -> ModuleType | None:
    return _KERNEL


import kernelsax  # noqa: E402

assert kernelsax.bind_libxml2(etree.__file__.encode())
READERS["sax"] = _read_sax
DEFAULT_READER = "sax"
PATCH
