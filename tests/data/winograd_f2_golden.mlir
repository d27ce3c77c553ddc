module {
  func.func @main(%arg0: tensor<1x4x4x1xf32>, %arg1: tensor<3x3x1x1xf32>) -> tensor<1x2x2x1xf32> {
    %0 = stablehlo.slice %arg0 [0:1, 0:1:2, 0:4, 0:1] : (tensor<1x4x4x1xf32>) -> tensor<1x1x4x1xf32>
    %1 = stablehlo.slice %arg0 [0:1, 1:2:2, 0:4, 0:1] : (tensor<1x4x4x1xf32>) -> tensor<1x1x4x1xf32>
    %2 = stablehlo.slice %arg0 [0:1, 2:3:2, 0:4, 0:1] : (tensor<1x4x4x1xf32>) -> tensor<1x1x4x1xf32>
    %3 = stablehlo.slice %arg0 [0:1, 3:4:2, 0:4, 0:1] : (tensor<1x4x4x1xf32>) -> tensor<1x1x4x1xf32>
    %4 = stablehlo.subtract %0, %2 : tensor<1x1x4x1xf32>
    %5 = stablehlo.add %1, %2 : tensor<1x1x4x1xf32>
    %6 = stablehlo.negate %1 : tensor<1x1x4x1xf32>
    %7 = stablehlo.add %6, %2 : tensor<1x1x4x1xf32>
    %8 = stablehlo.subtract %1, %3 : tensor<1x1x4x1xf32>
    %9 = stablehlo.slice %4 [0:1, 0:1, 0:1:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %10 = stablehlo.slice %4 [0:1, 0:1, 1:2:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %11 = stablehlo.slice %4 [0:1, 0:1, 2:3:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %12 = stablehlo.slice %4 [0:1, 0:1, 3:4:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %13 = stablehlo.subtract %9, %11 : tensor<1x1x1x1xf32>
    %14 = stablehlo.reshape %13 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %15 = stablehlo.add %10, %11 : tensor<1x1x1x1xf32>
    %16 = stablehlo.reshape %15 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %17 = stablehlo.negate %10 : tensor<1x1x1x1xf32>
    %18 = stablehlo.add %17, %11 : tensor<1x1x1x1xf32>
    %19 = stablehlo.reshape %18 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %20 = stablehlo.subtract %10, %12 : tensor<1x1x1x1xf32>
    %21 = stablehlo.reshape %20 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %22 = stablehlo.slice %5 [0:1, 0:1, 0:1:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %23 = stablehlo.slice %5 [0:1, 0:1, 1:2:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %24 = stablehlo.slice %5 [0:1, 0:1, 2:3:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %25 = stablehlo.slice %5 [0:1, 0:1, 3:4:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %26 = stablehlo.subtract %22, %24 : tensor<1x1x1x1xf32>
    %27 = stablehlo.reshape %26 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %28 = stablehlo.add %23, %24 : tensor<1x1x1x1xf32>
    %29 = stablehlo.reshape %28 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %30 = stablehlo.negate %23 : tensor<1x1x1x1xf32>
    %31 = stablehlo.add %30, %24 : tensor<1x1x1x1xf32>
    %32 = stablehlo.reshape %31 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %33 = stablehlo.subtract %23, %25 : tensor<1x1x1x1xf32>
    %34 = stablehlo.reshape %33 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %35 = stablehlo.slice %7 [0:1, 0:1, 0:1:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %36 = stablehlo.slice %7 [0:1, 0:1, 1:2:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %37 = stablehlo.slice %7 [0:1, 0:1, 2:3:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %38 = stablehlo.slice %7 [0:1, 0:1, 3:4:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %39 = stablehlo.subtract %35, %37 : tensor<1x1x1x1xf32>
    %40 = stablehlo.reshape %39 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %41 = stablehlo.add %36, %37 : tensor<1x1x1x1xf32>
    %42 = stablehlo.reshape %41 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %43 = stablehlo.negate %36 : tensor<1x1x1x1xf32>
    %44 = stablehlo.add %43, %37 : tensor<1x1x1x1xf32>
    %45 = stablehlo.reshape %44 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %46 = stablehlo.subtract %36, %38 : tensor<1x1x1x1xf32>
    %47 = stablehlo.reshape %46 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %48 = stablehlo.slice %8 [0:1, 0:1, 0:1:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %49 = stablehlo.slice %8 [0:1, 0:1, 1:2:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %50 = stablehlo.slice %8 [0:1, 0:1, 2:3:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %51 = stablehlo.slice %8 [0:1, 0:1, 3:4:2, 0:1] : (tensor<1x1x4x1xf32>) -> tensor<1x1x1x1xf32>
    %52 = stablehlo.subtract %48, %50 : tensor<1x1x1x1xf32>
    %53 = stablehlo.reshape %52 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %54 = stablehlo.add %49, %50 : tensor<1x1x1x1xf32>
    %55 = stablehlo.reshape %54 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %56 = stablehlo.negate %49 : tensor<1x1x1x1xf32>
    %57 = stablehlo.add %56, %50 : tensor<1x1x1x1xf32>
    %58 = stablehlo.reshape %57 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %59 = stablehlo.subtract %49, %51 : tensor<1x1x1x1xf32>
    %60 = stablehlo.reshape %59 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1xf32>
    %61 = stablehlo.concatenate %14, %16, %19, %21, %27, %29, %32, %34, %40, %42, %45, %47, %53, %55, %58, %60, dim = 0 : (tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>) -> tensor<16x1x1xf32>
    %cst = stablehlo.constant dense<[[1.000000e+00, 0.000000e+00, 0.000000e+00], [5.000000e-01, 5.000000e-01, 5.000000e-01], [5.000000e-01, -5.000000e-01, 5.000000e-01], [0.000000e+00, 0.000000e+00, 1.000000e+00]]> : tensor<4x3xf32>
    %62 = stablehlo.dot_general %cst, %arg1, contracting_dims = [1] x [0] : (tensor<4x3xf32>, tensor<3x3x1x1xf32>) -> tensor<4x3x1x1xf32>
    %63 = stablehlo.dot_general %cst, %62, contracting_dims = [1] x [1] : (tensor<4x3xf32>, tensor<4x3x1x1xf32>) -> tensor<4x4x1x1xf32>
    %64 = stablehlo.transpose %63, dims = [1, 0, 2, 3] : (tensor<4x4x1x1xf32>) -> tensor<4x4x1x1xf32>
    %65 = stablehlo.reshape %64 : (tensor<4x4x1x1xf32>) -> tensor<16x1x1xf32>
    %66 = stablehlo.dot_general %61, %65, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<16x1x1xf32>, tensor<16x1x1xf32>) -> tensor<16x1x1xf32>
    %67 = stablehlo.slice %66 [0:1, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %68 = stablehlo.reshape %67 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %69 = stablehlo.slice %66 [1:2, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %70 = stablehlo.reshape %69 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %71 = stablehlo.slice %66 [2:3, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %72 = stablehlo.reshape %71 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %73 = stablehlo.slice %66 [3:4, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %74 = stablehlo.reshape %73 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %75 = stablehlo.slice %66 [4:5, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %76 = stablehlo.reshape %75 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %77 = stablehlo.slice %66 [5:6, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %78 = stablehlo.reshape %77 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %79 = stablehlo.slice %66 [6:7, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %80 = stablehlo.reshape %79 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %81 = stablehlo.slice %66 [7:8, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %82 = stablehlo.reshape %81 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %83 = stablehlo.slice %66 [8:9, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %84 = stablehlo.reshape %83 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %85 = stablehlo.slice %66 [9:10, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %86 = stablehlo.reshape %85 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %87 = stablehlo.slice %66 [10:11, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %88 = stablehlo.reshape %87 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %89 = stablehlo.slice %66 [11:12, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %90 = stablehlo.reshape %89 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %91 = stablehlo.slice %66 [12:13, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %92 = stablehlo.reshape %91 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %93 = stablehlo.slice %66 [13:14, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %94 = stablehlo.reshape %93 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %95 = stablehlo.slice %66 [14:15, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %96 = stablehlo.reshape %95 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %97 = stablehlo.slice %66 [15:16, 0:1, 0:1] : (tensor<16x1x1xf32>) -> tensor<1x1x1xf32>
    %98 = stablehlo.reshape %97 : (tensor<1x1x1xf32>) -> tensor<1x1x1x1xf32>
    %99 = stablehlo.add %68, %76 : tensor<1x1x1x1xf32>
    %100 = stablehlo.add %99, %84 : tensor<1x1x1x1xf32>
    %101 = stablehlo.add %70, %78 : tensor<1x1x1x1xf32>
    %102 = stablehlo.add %101, %86 : tensor<1x1x1x1xf32>
    %103 = stablehlo.add %72, %80 : tensor<1x1x1x1xf32>
    %104 = stablehlo.add %103, %88 : tensor<1x1x1x1xf32>
    %105 = stablehlo.add %74, %82 : tensor<1x1x1x1xf32>
    %106 = stablehlo.add %105, %90 : tensor<1x1x1x1xf32>
    %107 = stablehlo.subtract %76, %84 : tensor<1x1x1x1xf32>
    %108 = stablehlo.subtract %107, %92 : tensor<1x1x1x1xf32>
    %109 = stablehlo.subtract %78, %86 : tensor<1x1x1x1xf32>
    %110 = stablehlo.subtract %109, %94 : tensor<1x1x1x1xf32>
    %111 = stablehlo.subtract %80, %88 : tensor<1x1x1x1xf32>
    %112 = stablehlo.subtract %111, %96 : tensor<1x1x1x1xf32>
    %113 = stablehlo.subtract %82, %90 : tensor<1x1x1x1xf32>
    %114 = stablehlo.subtract %113, %98 : tensor<1x1x1x1xf32>
    %115 = stablehlo.add %100, %102 : tensor<1x1x1x1xf32>
    %116 = stablehlo.add %115, %104 : tensor<1x1x1x1xf32>
    %117 = stablehlo.reshape %116 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1x1x1xf32>
    %118 = stablehlo.subtract %102, %104 : tensor<1x1x1x1xf32>
    %119 = stablehlo.subtract %118, %106 : tensor<1x1x1x1xf32>
    %120 = stablehlo.reshape %119 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1x1x1xf32>
    %121 = stablehlo.concatenate %117, %120, dim = 4 : (tensor<1x1x1x1x1x1xf32>, tensor<1x1x1x1x1x1xf32>) -> tensor<1x1x1x1x2x1xf32>
    %122 = stablehlo.add %108, %110 : tensor<1x1x1x1xf32>
    %123 = stablehlo.add %122, %112 : tensor<1x1x1x1xf32>
    %124 = stablehlo.reshape %123 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1x1x1xf32>
    %125 = stablehlo.subtract %110, %112 : tensor<1x1x1x1xf32>
    %126 = stablehlo.subtract %125, %114 : tensor<1x1x1x1xf32>
    %127 = stablehlo.reshape %126 : (tensor<1x1x1x1xf32>) -> tensor<1x1x1x1x1x1xf32>
    %128 = stablehlo.concatenate %124, %127, dim = 4 : (tensor<1x1x1x1x1x1xf32>, tensor<1x1x1x1x1x1xf32>) -> tensor<1x1x1x1x2x1xf32>
    %129 = stablehlo.concatenate %121, %128, dim = 2 : (tensor<1x1x1x1x2x1xf32>, tensor<1x1x1x1x2x1xf32>) -> tensor<1x1x2x1x2x1xf32>
    %130 = stablehlo.reshape %129 : (tensor<1x1x2x1x2x1xf32>) -> tensor<1x2x2x1xf32>
    return %130 : tensor<1x2x2x1xf32>
  }
}
