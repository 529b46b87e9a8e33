#version 330 core
// Colours a heatmap cell from its value: the value texture is sampled at the nearest cell, mapped
// to [0, 1] with the scale, and looked up in the colour map's 256-entry table at the nearest entry
// (the app's rectangle path rounds the same way). Hidden cells (-inf) get a diagonal hatch. When a
// pixel covers several cells (a 4096-token matrix zoomed out), it shows the largest of them, so a
// sharp peak never falls between samples: the texture's level k holds the largest value of each
// 2^k × 2^k block of cells, and up to 4 × 4 samples of the level whose texels are a quarter of
// the pixel's extent (or larger) cover every cell under it.
uniform sampler2D Values;  // R32F, one texel per cell at level 0, max-pooled levels above
uniform sampler2D Lut;     // 256 x 1 RGBA8
uniform float VMin;
uniform float VMax;
uniform vec4 HatchA;
uniform vec4 HatchB;
in vec2 Frag_UV;
out vec4 Out_Color;

bool hidden(float v) { return isinf(v) || isnan(v); }

void main() {
  vec2 duv = fwidth(Frag_UV);
  vec2 cells = duv * vec2(textureSize(Values, 0));  // cells under this pixel, per axis
  float level = max(0.0, ceil(log2(max(max(cells.x, cells.y), 1.0) / 4.0)));
  vec2 texels = cells / exp2(level);  // texels of that level under the pixel: at most 4
  float v = textureLod(Values, Frag_UV, level).r;
  if (max(texels.x, texels.y) > 1.0) {
    int nx = int(min(ceil(texels.x), 4.0));
    int ny = int(min(ceil(texels.y), 4.0));
    bool any = !hidden(v);
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {
        if (a >= nx || b >= ny) continue;
        vec2 off = vec2((float(a) + 0.5) / float(nx) - 0.5, (float(b) + 0.5) / float(ny) - 0.5);
        float s = textureLod(Values, Frag_UV + off * duv, level).r;
        if (hidden(s)) continue;
        v = any ? max(v, s) : s;
        any = true;
      }
  }
  if (hidden(v)) {
    float s = mod(gl_FragCoord.x + gl_FragCoord.y, 7.0);
    Out_Color = s < 1.5 ? HatchB : HatchA;
    return;
  }
  float span = VMax - VMin;
  float t = span > 0.0 ? clamp((v - VMin) / span, 0.0, 1.0) : 0.5;
  float index = floor(t * 255.0 + 0.5);
  Out_Color = vec4(texture(Lut, vec2((index + 0.5) / 256.0, 0.5)).rgb, 1.0);
}
