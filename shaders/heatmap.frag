#version 330 core
// Colours a heatmap cell from its value: the value texture is sampled at the nearest cell, mapped
// to [0, 1] with the scale, and looked up in the colour map's 256-entry table at the nearest entry
// (the app's rectangle path rounds the same way). Hidden cells (-inf) get a diagonal hatch.
uniform sampler2D Values;  // R32F, one texel per cell
uniform sampler2D Lut;     // 256 x 1 RGBA8
uniform float VMin;
uniform float VMax;
uniform vec4 HatchA;
uniform vec4 HatchB;
in vec2 Frag_UV;
out vec4 Out_Color;
void main() {
  float v = texture(Values, Frag_UV).r;
  if (isinf(v) || isnan(v)) {
    float s = mod(gl_FragCoord.x + gl_FragCoord.y, 7.0);
    Out_Color = s < 1.5 ? HatchB : HatchA;
    return;
  }
  float span = VMax - VMin;
  float t = span > 0.0 ? clamp((v - VMin) / span, 0.0, 1.0) : 0.5;
  float index = floor(t * 255.0 + 0.5);
  Out_Color = vec4(texture(Lut, vec2((index + 0.5) / 256.0, 0.5)).rgb, 1.0);
}
