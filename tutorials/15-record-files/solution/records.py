"""Lab 15: a record file written and read by hand - TFRecord's framing, its CRC-32C checksums,
an index for random access, and the protobuf bytes of a tf.train.Example - checked byte for byte
against wick.records (C++) and against a file TensorFlow wrote.

A TFRecord file is records back to back, each
    uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes | data | uint32 masked CRC-32C of data
Pure Python throughout: struct for the fixed-width fields, ints for the CRC register."""

import struct

CASTAGNOLI = 0x82F63B78  # CRC-32C's polynomial, bit-reversed (the register shifts right)


def crc32c_table():
    """The 256-entry table: entry b is the register after feeding byte b into a zero register
    (eight shift-and-xor steps), so crc32c can process a byte per lookup."""
    # BEGIN SOLUTION: for each byte b: crc = b; 8 times: crc = (crc >> 1) ^ (CASTAGNOLI if crc & 1 else 0)
    table = []
    for b in range(256):
        crc = b
        for _ in range(8):
            crc = (crc >> 1) ^ (CASTAGNOLI if crc & 1 else 0)
        table.append(crc)
    return table
    # END SOLUTION


TABLE = None


def crc32c(data, crc=0):
    """CRC-32C of `data` (bytes), continuing from `crc` (the CRC of the bytes before): the
    register starts complemented, takes one table lookup per byte, and is complemented again."""
    global TABLE
    if TABLE is None:
        TABLE = crc32c_table()
    # BEGIN SOLUTION: crc ^= 0xFFFFFFFF; per byte: crc = TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8); complement at the end
    crc ^= 0xFFFFFFFF
    for byte in data:
        crc = TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF
    # END SOLUTION


def mask(crc):
    """TFRecord's masked CRC: rotate right by 15 bits, add 0xa282ead8 (mod 2^32). A CRC over
    bytes that contain CRCs is weak, so the stored value is scrambled."""
    # BEGIN SOLUTION: ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF, plus 0xA282EAD8, mod 2**32
    rotated = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
    return (rotated + 0xA282EAD8) & 0xFFFFFFFF
    # END SOLUTION


def frame(payload):
    """One record's bytes: header (length, masked CRC of the length's 8 bytes), payload, footer."""
    # BEGIN SOLUTION: header = struct.pack("<Q", len); then struct.pack("<I", mask(crc32c(header))), payload, struct.pack("<I", mask(crc32c(payload)))
    header = struct.pack("<Q", len(payload))
    return (header + struct.pack("<I", mask(crc32c(header))) + payload +
            struct.pack("<I", mask(crc32c(payload))))
    # END SOLUTION


def write_records(path, payloads):
    with open(path, "wb") as f:
        for payload in payloads:
            f.write(frame(payload))


class CorruptRecord(ValueError):
    """A record whose checksum does not match, or a file that ends inside a record."""


def read_record(f, number):
    """The payload of the record at f's position, or None at a clean end of file. Checks the
    length's CRC before trusting the length, then the payload's CRC; raises CorruptRecord
    naming `number` and the byte offset."""
    offset = f.tell()
    # BEGIN SOLUTION: read 12 header bytes (b"" -> None, short -> CorruptRecord "truncated"); check mask(crc32c(length bytes)); read length + 4; check short read and the data CRC
    header = f.read(12)
    if not header:
        return None
    if len(header) < 12:
        raise CorruptRecord(f"record {number} at byte {offset}: truncated inside its header")
    (length,) = struct.unpack("<Q", header[:8])
    if struct.unpack("<I", header[8:])[0] != mask(crc32c(header[:8])):
        raise CorruptRecord(f"record {number} at byte {offset}: corrupt length")
    body = f.read(length + 4)
    if len(body) < length + 4:
        raise CorruptRecord(f"record {number} at byte {offset}: truncated, {length} bytes "
                            f"announced")
    payload = body[:length]
    if struct.unpack("<I", body[length:])[0] != mask(crc32c(payload)):
        raise CorruptRecord(f"record {number} at byte {offset}: data checksum does not match")
    return payload
    # END SOLUTION


def read_records(path):
    with open(path, "rb") as f:
        number = 0
        while (payload := read_record(f, number)) is not None:
            yield payload
            number += 1


def build_index(path):
    """[(offset, length)] of every record, reading only the headers: seek past each payload.
    This is what makes a sequential format randomly accessible (MXNet's .idx, DALI's
    tfrecord2idx, ArrayRecord's footer)."""
    # BEGIN SOLUTION: loop: header = f.read(12) until empty; check the length's CRC; append (offset, length); f.seek(length + 4, 1)
    index = []
    with open(path, "rb") as f:
        while True:
            offset = f.tell()
            header = f.read(12)
            if not header:
                return index
            if len(header) < 12:
                raise CorruptRecord(f"record {len(index)} at byte {offset}: truncated header")
            (length,) = struct.unpack("<Q", header[:8])
            if struct.unpack("<I", header[8:])[0] != mask(crc32c(header[:8])):
                raise CorruptRecord(f"record {len(index)} at byte {offset}: corrupt length")
            index.append((offset, length))
            f.seek(length + 4, 1)
    # END SOLUTION


def read_at(path, index, i):
    """Record i through the index: one seek, one read, the checksum checked."""
    offset, _ = index[i]
    with open(path, "rb") as f:
        f.seek(offset)
        return read_record(f, i)


def varint(value):
    """Protobuf's base-128 varint: 7 bits per byte, low bits first, high bit = more to come.
    Negative int64s are their 64-bit two's complement (so they take 10 bytes)."""
    # BEGIN SOLUTION: value &= 2**64 - 1; emit (value & 0x7F) | 0x80 while value >= 0x80, shifting by 7; then the last byte
    value &= (1 << 64) - 1
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
    # END SOLUTION


def field(number, payload):
    """A length-delimited protobuf field (wire type 2): tag, length, payload."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def encode_image_example(image_bytes, label):
    """A tf.train.Example with "image" (one bytes value) and "label" (one int64), in the bytes
    TensorFlow's SerializeToString(deterministic=True) writes:
      Example{1: Features{1: entry{1: key, 2: Feature}} per feature, keys sorted}
      Feature{1: BytesList{1: value}} or Feature{3: Int64List{1: packed varints}}."""
    # BEGIN SOLUTION: image = field(1, field(1, image_bytes)); label = field(3, field(1, varint(label))); entries field(1, field(1, key) + field(2, feature)) for "image" then "label"; wrap in field(1, ...)
    image = field(1, field(1, image_bytes))
    label_feature = field(3, field(1, varint(label)))
    entries = (field(1, field(1, b"image") + field(2, image)) +
               field(1, field(1, b"label") + field(2, label_feature)))
    return field(1, entries)
    # END SOLUTION
