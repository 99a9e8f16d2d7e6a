"""The near-wake thermal temperature of one flow-field window (a fields_NNNN.vti written by
argon-sandbox's `run --fields` or `lammps-fields`): the count-weighted mean of the bins from the
cylinder's rear to 3 D behind it, |y - y_c| < D/2. Shared by compare_tunnel.py and the vortex
street's reduce_window1.py."""
import math


def near_wake_temperature(vti_path, centre, diameter):
    """Count-weighted thermal temperature of the near-wake bins of the window in `vti_path`
    (NaN when none holds an atom)."""
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOXML import vtkXMLImageDataReader

    r = vtkXMLImageDataReader()
    r.SetFileName(vti_path)
    r.Update()
    img = r.GetOutput()
    nx, ny, _ = [n - 1 for n in img.GetDimensions()]
    ox, oy, _ = img.GetOrigin()
    hx, hy, _ = img.GetSpacing()
    t = vtk_to_numpy(img.GetCellData().GetArray("temperature"))
    c = vtk_to_numpy(img.GetCellData().GetArray("count"))
    num = den = 0.0
    for j in range(ny):
        if abs(oy + (j + 0.5) * hy - centre[1]) >= 0.5 * diameter:
            continue
        for i in range(nx):
            x = ox + (i + 0.5) * hx
            if centre[0] + 0.5 * diameter <= x < centre[0] + 3.5 * diameter:
                b = i + nx * j
                num += c[b] * t[b]
                den += c[b]
    return num / den if den > 0 else math.nan
