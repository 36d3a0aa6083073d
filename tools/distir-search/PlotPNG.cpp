//===- PlotPNG.cpp - Rasterize the search plot ----------------------------===//
//
// Part of the DistIR project.
//
//===----------------------------------------------------------------------===//
//
// The plot is drawn once, as SVG (lib/Search/Report.cpp); PNG output renders
// that document with librsvg rather than drawing it a second time.
//
//===----------------------------------------------------------------------===//

#include "PlotPNG.h"

#ifdef DISTIR_HAVE_RSVG
#include <cairo.h>
#include <librsvg/rsvg.h>

#include <cmath>
#endif

bool distir::canWritePlotPNG() {
#ifdef DISTIR_HAVE_RSVG
  return true;
#else
  return false;
#endif
}

bool distir::writePlotPNG(llvm::StringRef svg, llvm::StringRef path,
                          std::string &error) {
#ifdef DISTIR_HAVE_RSVG
  GError *gerror = nullptr;
  RsvgHandle *handle = rsvg_handle_new_from_data(
      reinterpret_cast<const guint8 *>(svg.data()), svg.size(), &gerror);
  if (!handle) {
    error = std::string("cannot read the plot: ") +
            (gerror ? gerror->message : "unknown error");
    if (gerror)
      g_error_free(gerror);
    return false;
  }
  gdouble width = 0, height = 0;
  if (!rsvg_handle_get_intrinsic_size_in_pixels(handle, &width, &height) ||
      width < 1 || height < 1) {
    g_object_unref(handle);
    error = "the plot has no size in pixels";
    return false;
  }
  cairo_surface_t *surface = cairo_image_surface_create(
      CAIRO_FORMAT_ARGB32, static_cast<int>(std::ceil(width)),
      static_cast<int>(std::ceil(height)));
  cairo_t *cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  RsvgRectangle viewport = {0, 0, width, height};
  bool ok = rsvg_handle_render_document(handle, cr, &viewport, &gerror);
  if (!ok) {
    error = std::string("cannot render the plot: ") +
            (gerror ? gerror->message : "unknown error");
    if (gerror)
      g_error_free(gerror);
  } else {
    std::string file = path.str();
    cairo_status_t status = cairo_surface_write_to_png(surface, file.c_str());
    if (status != CAIRO_STATUS_SUCCESS) {
      ok = false;
      error = "cannot write '" + file + "': " + cairo_status_to_string(status);
    }
  }
  cairo_destroy(cr);
  cairo_surface_destroy(surface);
  g_object_unref(handle);
  return ok;
#else
  (void)svg;
  (void)path;
  error = "PNG plots need librsvg (librsvg2-dev) when DistIR is built; "
          "write an .svg plot instead";
  return false;
#endif
}
