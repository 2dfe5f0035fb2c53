// Cairo and Pango (and the GLib functions the figures use with them),
// opened when a figure is first drawn instead of when the program starts.
// Linked the usual way they bring some forty libraries (pangoft2,
// harfbuzz, fontconfig, freetype, pixman, X11's client libraries, ...)
// into every kvscope process, and their loading, relocations and GObject
// type registrations put ~3.6 MB in the resident memory of a CLI command
// that draws nothing (a `generate`, a `tokenize`: bench/NOTES.md).
//
// drawing_library.cpp defines each function the figures call under its
// own name, with the signature of its header; the first call to any of
// them opens libpangocairo-1.0.so.0 (its dependencies bring pango, cairo,
// gobject and glib) and each function's address is looked up on its first
// call. The executables do not link those libraries, so a call the
// figures start making that is not defined there fails the link with an
// undefined reference: add it to drawing_library.cpp.
#pragma once

namespace kvscope {

// Whether the drawing libraries are mapped into this process now (for
// tests: a command that draws nothing must not map them).
bool drawing_library_is_mapped();

}  // namespace kvscope
