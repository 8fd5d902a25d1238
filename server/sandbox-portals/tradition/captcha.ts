import { crc32, deflateSync } from 'node:zlib';

/**
 * The login captcha of Mutuelle Tradition: random letters and digits drawn into a small grayscale
 * PNG, encoded here (IHDR, one deflated IDAT, IEND; node:zlib's deflate and CRC-32) with a 5×7
 * bitmap font. Letters that read alike (I/1, O/0) are left out of the alphabet.
 */

const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'; // 32 signs: a byte's low 5 bits pick one, unbiased
const CAPTCHA_LENGTH = 5;

/** Each sign's 7 rows of 5 pixels, most significant bit on the left, as 14 hex digits. */
const FONT: Readonly<Record<string, string>> = {
  A: '0E11111F111111',
  B: '1E11111E11111E',
  C: '0E11101010110E',
  D: '1E11111111111E',
  E: '1F10101E10101F',
  F: '1F10101E101010',
  G: '0E11101711110F',
  H: '1111111F111111',
  J: '0702020202120C',
  K: '11121418141211',
  L: '1010101010101F',
  M: '111B1515111111',
  N: '11111915131111',
  P: '1E11111E101010',
  Q: '0E11111115120D',
  R: '1E11111E141211',
  S: '0F10100E01011E',
  T: '1F040404040404',
  U: '1111111111110E',
  V: '11111111110A04',
  W: '1111111515150A',
  X: '11110A040A1111',
  Y: '1111110A040404',
  Z: '1F01020408101F',
  '2': '0E11010204081F',
  '3': '1F02040201110E',
  '4': '02060A121F0202',
  '5': '1F101E0101110E',
  '6': '0608101E11110E',
  '7': '1F010204080808',
  '8': '0E11110E11110E',
  '9': '0E11110F01020C',
};

const SCALE = 4;
const MARGIN = 10;
const ADVANCE = 7 * SCALE; // a glyph's 5 columns and 2 of spacing
const WIDTH = MARGIN * 2 + CAPTCHA_LENGTH * ADVANCE - 2 * SCALE;
const HEIGHT = MARGIN * 2 + 7 * SCALE + 8;

/** The captcha's text from the injected random source. */
export function captchaText(randomBytes: (size: number) => Buffer): string {
  return [...randomBytes(CAPTCHA_LENGTH)].map((byte) => ALPHABET[byte & 31]).join('');
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([length, body, crc]);
}

/** A grayscale 8-bit PNG of `pixels` (one byte a pixel, rows top to bottom). */
function encodePng(width: number, height: number, pixels: Uint8Array): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // bit depth 8, grayscale, deflate, no filter method, no interlace
  const raw = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) raw.set(pixels.subarray(y * width, (y + 1) * width), y * (width + 1) + 1); // filter byte 0
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The captcha's image: its signs at random heights, over random specks that leave them readable. */
export function captchaPng(text: string, randomBytes: (size: number) => Buffer): Buffer {
  const pixels = new Uint8Array(WIDTH * HEIGHT).fill(236);
  const noise = randomBytes(WIDTH);
  for (let i = 0; i < noise.length; i++) {
    const spot = (noise[i]! * 7919 + i * 131) % pixels.length;
    pixels[spot] = 150;
  }
  const jitter = randomBytes(text.length);
  [...text].forEach((sign, index) => {
    const rows = FONT[sign] ?? '';
    const top = MARGIN + (jitter[index]! % 9);
    for (let row = 0; row < 7; row++) {
      const bits = parseInt(rows.slice(row * 2, row * 2 + 2), 16);
      for (let col = 0; col < 5; col++) {
        if (!(bits & (0x10 >> col))) continue;
        for (let dy = 0; dy < SCALE; dy++)
          for (let dx = 0; dx < SCALE; dx++) pixels[(top + row * SCALE + dy) * WIDTH + MARGIN + index * ADVANCE + col * SCALE + dx] = 40;
      }
    }
  });
  return encodePng(WIDTH, HEIGHT, pixels);
}
