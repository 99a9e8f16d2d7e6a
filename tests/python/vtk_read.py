"""Reads flow-field files with VTK (as ParaView would) and prints what VTK got, as JSON.

Usage: python vtk_read.py DIR
Reads DIR/fields.pvd (a plain XML list) and every .vti it names with vtkXMLImageDataReader.
Prints {"pvd": [[time, file], ...], "files": [{dims, spacing, origin, cells, time, arrays:
{name: [values]}, hidden: [cell ids]}, ...]}.
"""
import json
import os
import sys
import xml.etree.ElementTree as ET

from vtkmodules.vtkIOXML import vtkXMLImageDataReader
from vtkmodules.util.numpy_support import vtk_to_numpy

folder = sys.argv[1]
tree = ET.parse(os.path.join(folder, "fields.pvd"))
pvd = [[float(d.get("timestep")), d.get("file")] for d in tree.getroot().iter("DataSet")]
files = []
for _, name in pvd:
    r = vtkXMLImageDataReader()
    r.SetFileName(os.path.join(folder, name))
    r.Update()
    if r.GetErrorCode() != 0:
        raise SystemExit(f"VTK could not read {name}: error {r.GetErrorCode()}")
    img = r.GetOutput()
    cd = img.GetCellData()
    arrays = {}
    for i in range(cd.GetNumberOfArrays()):
        a = cd.GetArray(i)
        arrays[a.GetName()] = vtk_to_numpy(a).tolist()
    fd = img.GetFieldData()
    tv = fd.GetArray("TimeValue")
    files.append({
        "dims": list(img.GetDimensions()),
        "spacing": list(img.GetSpacing()),
        "origin": list(img.GetOrigin()),
        "cells": img.GetNumberOfCells(),
        "time": tv.GetValue(0) if tv is not None else None,
        "arrays": arrays,
        "hidden": [c for c in range(img.GetNumberOfCells()) if not img.IsCellVisible(c)],
    })
print(json.dumps({"pvd": pvd, "files": files}))
