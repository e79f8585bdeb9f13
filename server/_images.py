"""Map images (issue 35): an upload is hostile input, so it is sniffed, size-checked
from its header before any pixel is decoded, decoded with Pillow, and re-encoded from
its pixels alone (no metadata, no trailing bytes, no second format riding along), and
the re-encoded bytes are what is stored and served, under their sha256.

PNG, JPEG and WebP are taken, recognised by their first bytes (never by a name or a
Content-Type). A PNG stays a lossless PNG; a JPEG or a WebP becomes a WebP. Only the
first frame of an animated image is kept. An orientation the camera wrote in EXIF is
applied to the pixels before the metadata goes.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from typing import Final

import attrs
from PIL import Image, ImageOps

#: The formats taken, by Pillow's name: what they are stored as, with its MIME type.
STORED_AS: Final[dict[str, tuple[str, str]]] = {
    "PNG": ("png", "image/png"),
    "JPEG": ("webp", "image/webp"),
    "WEBP": ("webp", "image/webp"),
}

#: Extension -> MIME type of what is served.
MIME: Final[dict[str, str]] = {"png": "image/png", "webp": "image/webp"}

#: The largest side of an image, in pixels (as an arena's ``map`` allows).
MAX_SIDE: Final = 16384


@attrs.frozen
class StoredImage:
    """A re-encoded image: ``id`` is the sha256 of ``data`` in hex; ``ext`` is ``png``
    or ``webp``."""

    id: str
    ext: str
    width: int
    height: int
    data: bytes = attrs.field(repr=False)

    @property
    def mime(self) -> str:
        return MIME[self.ext]

    @property
    def url(self) -> str:
        return f"/images/{self.id}.{self.ext}"


class ImageRefused(ValueError):
    """An upload refused: ``status`` (HTTP), ``code`` (stable, in the JSON answer) and a
    message for a person."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def sniff(data: bytes) -> str | None:
    """The format ``data`` starts as (``PNG``, ``JPEG``, ``WEBP``), or ``None``."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if data.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP"
    return None


def reencode(data: bytes, max_pixels: int) -> StoredImage:
    """``data`` checked, decoded and re-encoded; :class:`ImageRefused` when it is not a
    PNG, JPEG or WebP (``unsupported_image``), is bigger than ``max_pixels`` or
    :data:`MAX_SIDE` (``image_too_large``, read from the header: nothing is decoded),
    or does not decode (``unreadable_image``)."""
    kind = sniff(data)
    if kind is None:
        raise ImageRefused(
            415,
            "unsupported_image",
            "This is not a PNG, JPEG or WebP image (SVG, GIF and the rest are not taken).",
        )
    extra = _trailing(kind, data)
    if extra:
        raise ImageRefused(
            422,
            "image_trailing_data",
            f"The file goes on for {extra} bytes after its {kind} image ends: a file that "
            "is also something else (a polyglot) is not taken.",
        )
    with warnings.catch_warnings():
        # Pillow's own bomb guard: a warning at MAX_IMAGE_PIXELS, an error at twice it.
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data), formats=[kind]) as image:
                width, height = image.size  # from the header: no pixel decoded yet
                if width > MAX_SIDE or height > MAX_SIDE or width * height > max_pixels:
                    raise ImageRefused(
                        413,
                        "image_too_large",
                        f"The image is {width}x{height} pixels; the most this server takes "
                        f"is {max_pixels} pixels, at most {MAX_SIDE} on a side.",
                    )
                image.seek(0)
                image.load()
                upright = ImageOps.exif_transpose(image)
                pixels = _pixels(upright)
        except ImageRefused:
            raise
        except (Image.DecompressionBombWarning, Image.DecompressionBombError):
            raise ImageRefused(
                413, "image_too_large", "The image has too many pixels to decode safely."
            ) from None
        except (OSError, SyntaxError, ValueError, EOFError, MemoryError) as exc:
            raise ImageRefused(
                422,
                "unreadable_image",
                f"The image does not decode as a {kind} ({type(exc).__name__}).",
            ) from None
    ext = STORED_AS[kind][0]
    out = io.BytesIO()
    if ext == "png":
        pixels.save(out, format="PNG", optimize=True)
    else:
        pixels.save(out, format="WEBP", quality=85, method=4)
    encoded = out.getvalue()
    return StoredImage(
        hashlib.sha256(encoded).hexdigest(), ext, pixels.width, pixels.height, encoded
    )


def _trailing(kind: str, data: bytes) -> int:
    """How many bytes follow the end of the image ``data`` starts as (its last PNG chunk,
    its RIFF size, its JPEG end marker); 0 when it cannot be told (a broken image fails to
    decode instead)."""
    if kind == "PNG":
        at = 8
        while at + 12 <= len(data):
            length = int.from_bytes(data[at : at + 4], "big")
            end = at + 12 + length
            if data[at + 4 : at + 8] == b"IEND":
                return max(len(data) - end, 0)
            at = end
        return 0
    if kind == "WEBP":
        size = int.from_bytes(data[4:8], "little") + 8
        return max(len(data) - size - (size % 2), 0)
    end = data.rfind(b"\xff\xd9")
    return len(data) - end - 2 if end >= 0 else 0


def _pixels(image: Image.Image) -> Image.Image:
    """The image's pixels alone, in RGB or RGBA: a new image without ``info`` (no EXIF,
    ICC profile, text chunks or comments go along)."""
    alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
    mode = "RGBA" if alpha else "RGB"
    converted = image.convert(mode)
    clean = Image.new(mode, converted.size)
    clean.paste(converted)
    return clean
