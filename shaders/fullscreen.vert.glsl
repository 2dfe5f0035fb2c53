#version 330 core
// One triangle that covers the whole target (no vertex buffer: the corners
// come from gl_VertexID), so a heatmap pass is a single draw call whatever
// the number of cells. v_pixel is the fragment's position in target pixels
// with the origin at the TOP left, the way ImGui and the heatmap rows run.
uniform vec2 u_target_size;  // pixels
out vec2 v_pixel;

void main() {
  vec2 corner = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));  // (0,0) (2,0) (0,2)
  gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
  // GL's first texture row is the bottom of the target, and ImGui::Image
  // shows texture row 0 at the top: so pixel row 0 here is NDC y = -1, and
  // the target shows upright with ImGui's default uvs.
  v_pixel = corner * u_target_size;
}
