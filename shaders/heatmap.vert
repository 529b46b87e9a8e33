#version 330 core
// Heatmap quad: the same vertex layout as Dear ImGui's (ImDrawVert), so the quad is an ordinary
// ImGui image whose pixels heatmap.frag colours.
layout(location = 0) in vec2 Position;
layout(location = 1) in vec2 UV;
layout(location = 2) in vec4 Color;
uniform mat4 ProjMtx;
out vec2 Frag_UV;
void main() {
  Frag_UV = UV;
  gl_Position = ProjMtx * vec4(Position.xy, 0.0, 1.0);
}
