"""Checks a PNG plot against the SVG it renders.

usage: check_png.py PLOT.png PLOT.svg

The file must be a PNG (signature and IHDR chunk) whose size is the SVG's
width and height, and its pixels must not all be equal (something was
drawn). Prints one line; exits 1 otherwise.
"""
import re
import struct
import sys
import zlib


def main():
    data = open(sys.argv[1], 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n' or data[12:16] != b'IHDR':
        print('not a PNG')
        return 1
    width, height = struct.unpack('>II', data[16:24])
    svg = open(sys.argv[2]).read()
    m = re.search(r'<svg[^>]*width="([0-9.]+)"[^>]*height="([0-9.]+)"', svg)
    if not m or (width, height) != (round(float(m.group(1))),
                                    round(float(m.group(2)))):
        print(f'PNG {width}x{height} does not match the SVG size')
        return 1
    # Concatenate the IDAT chunks and look at the raw scanlines.
    pos, idat = 8, b''
    while pos < len(data):
        length, kind = struct.unpack('>I4s', data[pos:pos + 8])
        if kind == b'IDAT':
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    if len(set(raw[1:])) < 3:
        print('blank image')
        return 1
    print(f'PNG {width}x{height}, as large as the SVG, not blank')
    return 0


if __name__ == '__main__':
    sys.exit(main())
